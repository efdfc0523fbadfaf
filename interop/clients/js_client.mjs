// Drives every A2A 1.0 method through the official JavaScript SDK's client (@a2a-js/sdk).
//
// Usage: node js_client.mjs URL [--token TOKEN] [--timeout SECS]
//
// URL is an agent's base URL (its card is read from /.well-known/agent-card.json). It is meant
// to be `a2a-conform mock --extended-card-token TOKEN --allow-loopback-webhooks`, whose ACTS
// prefixes (`tck-complete-task`, `tck-stream-chunked`, `tck-cancel`) pick what each task does.
//
// Prints one line per method, `ok METHOD: detail` or `FAIL METHOD: reason` (or `skip METHOD:
// why`), and exits 1 if any method failed. The SDK lives in interop/js/node_modules, so this file
// resolves it from there wherever it is run from.

import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', 'js', 'package.json'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { Role, TaskState } = await load('@a2a-js/sdk');
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } = await load('@a2a-js/sdk/client');

const WEBHOOK = 'http://127.0.0.1:9/a2a-conform-interop-webhook';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { token: { type: 'string', default: 'T' }, timeout: { type: 'string', default: '15' } },
});
if (positionals.length !== 1) {
  console.error('usage: js_client.mjs URL [--token TOKEN] [--timeout SECS]');
  process.exit(2);
}
const url = positionals[0];
const timeoutMs = Number(values.timeout) * 1000;

let failed = 0;
const ok = (method, detail) => console.log(`ok ${method}: ${detail}`);
const fail = (method, reason) => {
  failed += 1;
  console.log(`FAIL ${method}: ${reason}`);
};

function bounded(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function step(method, body) {
  try {
    ok(method, await bounded(body(), method));
  } catch (error) {
    fail(method, `${error?.name ?? 'Error'}: ${error?.message ?? error}`.replace(/\s+/g, ' ').slice(0, 300));
  }
}

// Records the JSON-RPC method of every request the SDK sends, so that a call the SDK might
// answer from its cache (getAgentCard) is seen to reach the wire.
const sent = [];
async function recordingFetch(input, init) {
  try {
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    if (body?.method) sent.push(body.method);
  } catch {
    // not JSON: not ours to record
  }
  return fetch(input, init);
}

function userMessage(text, configuration) {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
      taskId: '',
      contextId: '',
      extensions: [],
      metadata: undefined,
      referenceTaskIds: [],
    },
    configuration,
    metadata: undefined,
  };
}

const stateName = (state) => TaskState[state] ?? String(state);
const isTask = (result) => result && typeof result.id === 'string' && result.status !== undefined;

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
  }),
);
const client = await bounded(factory.createFromUrl(url), 'reading the agent card');

const completed = {};

await step('SendMessage', async () => {
  const result = await client.sendMessage(userMessage('tck-complete-task hello'));
  if (!isTask(result)) throw new Error(`expected a Task, got ${JSON.stringify(result).slice(0, 200)}`);
  if (result.status.state !== TaskState.TASK_STATE_COMPLETED) {
    throw new Error(`task ended ${stateName(result.status.state)}`);
  }
  completed.id = result.id;
  return `task ${result.id} ${stateName(result.status.state)}`;
});

await step('SendStreamingMessage', async () => {
  const kinds = [];
  let lastState;
  for await (const event of client.sendMessageStream(userMessage('tck-stream-chunked go'))) {
    const kind = event.payload?.$case;
    kinds.push(kind);
    if (kind === 'statusUpdate') lastState = event.payload.value.status?.state;
  }
  if (kinds[0] !== 'task') throw new Error(`stream did not start with a task: ${kinds}`);
  if (!kinds.includes('artifactUpdate') || lastState !== TaskState.TASK_STATE_COMPLETED) {
    throw new Error(`events ${kinds}, last state ${stateName(lastState)}`);
  }
  return `${kinds.length} events, ending ${stateName(lastState)}`;
});

await step('GetTask', async () => {
  if (!completed.id) throw new Error('no task from SendMessage to read');
  const task = await client.getTask({ tenant: '', id: completed.id, historyLength: 1 });
  if (task.id !== completed.id) throw new Error(`asked for ${completed.id}, got ${task.id}`);
  return `task ${task.id} ${stateName(task.status?.state)}, ${task.history.length} history message(s)`;
});

await step('ListTasks', async () => {
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: 10,
    pageToken: '',
    historyLength: undefined,
    statusTimestampAfter: undefined,
    includeArtifacts: undefined,
  });
  const ids = page.tasks.map((t) => t.id);
  if (!ids.includes(completed.id)) throw new Error(`task ${completed.id} not among ${ids}`);
  return `${ids.length} task(s), totalSize ${page.totalSize}`;
});

// A task that waits to be canceled: push config CRUD, a subscriber, then the cancel.
const waiting = {};
try {
  const result = await bounded(
    client.sendMessage(
      userMessage('tck-cancel wait', {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        historyLength: undefined,
        returnImmediately: true,
      }),
    ),
    'starting a cancelable task',
  );
  if (isTask(result)) waiting.id = result.id;
} catch (error) {
  console.log(`# could not start a cancelable task: ${error?.message ?? error}`);
}

let subscriber;
if (waiting.id) {
  subscriber = (async () => {
    const seen = [];
    for await (const event of client.resubscribeTask({ tenant: '', id: waiting.id })) {
      const kind = event.payload?.$case;
      seen.push(kind === 'statusUpdate' ? stateName(event.payload.value.status?.state) : kind);
    }
    return seen;
  })();
  subscriber.catch(() => {}); // awaited below; keep an early failure from being unhandled
  await new Promise((resolve) => setTimeout(resolve, 300));
}

const need = (value, what) => {
  if (!value) throw new Error(`no ${what}`);
};
const config = {};

await step('CreateTaskPushNotificationConfig', async () => {
  need(waiting.id, 'cancelable task');
  const created = await client.createTaskPushNotificationConfig({
    tenant: '',
    id: '',
    taskId: waiting.id,
    url: WEBHOOK,
    token: 'interop-token',
    authentication: undefined,
  });
  if (!created.id || created.url !== WEBHOOK) throw new Error(`got ${JSON.stringify(created)}`);
  config.id = created.id;
  return `config ${created.id}`;
});

await step('GetTaskPushNotificationConfig', async () => {
  need(config.id, 'push config');
  const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: config.id });
  if (got.id !== config.id || got.url !== WEBHOOK) throw new Error(`got ${JSON.stringify(got)}`);
  return `config ${got.id} ${got.url}`;
});

await step('ListTaskPushNotificationConfigs', async () => {
  need(config.id, 'push config');
  const listed = await client.listTaskPushNotificationConfig({
    tenant: '',
    taskId: waiting.id,
    pageSize: 0,
    pageToken: '',
  });
  const ids = listed.configs.map((c) => c.id);
  if (!ids.includes(config.id)) throw new Error(`config ${config.id} not among ${ids}`);
  return `${ids.length} config(s)`;
});

await step('DeleteTaskPushNotificationConfig', async () => {
  need(config.id, 'push config');
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: config.id });
  const listed = await client.listTaskPushNotificationConfig({
    tenant: '',
    taskId: waiting.id,
    pageSize: 0,
    pageToken: '',
  });
  if (listed.configs.some((c) => c.id === config.id)) throw new Error('config still listed after delete');
  return `config ${config.id} gone`;
});

await step('CancelTask', async () => {
  need(waiting.id, 'cancelable task');
  const task = await client.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
  if (task.status?.state !== TaskState.TASK_STATE_CANCELED) {
    throw new Error(`task is ${stateName(task.status?.state)}`);
  }
  return `task ${task.id} ${stateName(task.status.state)}`;
});

await step('SubscribeToTask', async () => {
  need(subscriber, 'subscription');
  const seen = await subscriber;
  if (seen[0] !== 'task' || seen.at(-1) !== 'TASK_STATE_CANCELED') throw new Error(`events ${seen}`);
  return `events ${seen}`;
});

await step('GetExtendedAgentCard', async () => {
  const before = sent.length;
  const card = await client.getAgentCard({ serviceParameters: { Authorization: `Bearer ${values.token}` } });
  if (!sent.slice(before).includes('GetExtendedAgentCard')) {
    throw new Error('the SDK answered from its cached card without calling GetExtendedAgentCard');
  }
  return `card "${card.name}" with ${card.skills.length} skill(s)`;
});

process.exit(failed ? 1 : 0);
