// An ordinary echo agent built on the official A2A JavaScript SDK (@a2a-js/sdk, pinned in
// package.json / package-lock.json).
//
// It serves the A2A 1.0 JSON-RPC binding with the SDK's own stack: the Express handlers from
// `@a2a-js/sdk/server/express`, DefaultRequestHandler, InMemoryTaskStore, the in-memory push
// notification store and sender, and an AgentExecutor that publishes every change on the
// SDK's ExecutionEventBus. Nothing here speaks the wire format by hand.
//
// What it does is chosen by keywords in the user's text (whole words, case-insensitive):
//
//   please wait  WORKING for about 3 s, then COMPLETED; cancelable (ends CANCELED)
//   need input   INPUT_REQUIRED with a question; the next message on the task completes it
//   fail         FAILED with an agent message
//   reject       REJECTED with an agent message
//   just reply   a Message instead of a Task
//   chunks       a text artifact streamed in two chunks (append, lastChunk), then COMPLETED
//   data         COMPLETED with a data artifact {"echo": <text>}
//   file         COMPLETED with a small text/plain file artifact (raw bytes, filename)
//   (otherwise)  WORKING, then COMPLETED with one text artifact echoing the text
//
// Usage: node echo_agent.mjs --port PORT   (0 picks a free port). The first line on stdout is
// `listening on http://127.0.0.1:PORT` once the server accepts connections.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

const HOST = '127.0.0.1';
const RPC_PATH = '/a2a/jsonrpc';
const LONG_RUN_MS = 3000;

// Checked in this order; the first keyword found in the text decides.
const KEYWORDS = [
  ['please wait', 'long'],
  ['need input', 'input'],
  ['just reply', 'reply'],
  ['chunks', 'chunks'],
  ['reject', 'reject'],
  ['fail', 'fail'],
  ['data', 'data'],
  ['file', 'file'],
];

function behaviourFor(text) {
  const lowered = text.toLowerCase();
  for (const [keyword, behaviour] of KEYWORDS) {
    if (new RegExp(`\\b${keyword}\\b`).test(lowered)) return behaviour;
  }
  return 'echo';
}

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function userText(message) {
  return message.parts
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content.value)
    .join('\n');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Publishes the events of one task on the SDK's ExecutionEventBus.
class TaskEvents {
  constructor(bus, taskId, contextId) {
    this.bus = bus;
    this.taskId = taskId;
    this.contextId = contextId;
  }

  agentMessage(text) {
    return {
      messageId: randomUUID(),
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      taskId: this.taskId,
      contextId: this.contextId,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }

  status(state, text) {
    this.bus.publish(
      AgentEvent.statusUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        status: {
          state,
          message: text === undefined ? undefined : this.agentMessage(text),
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
  }

  artifact(parts, { artifactId = randomUUID(), name, append = false, lastChunk = true } = {}) {
    this.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
        append,
        lastChunk,
        metadata: undefined,
      }),
    );
  }
}

class EchoExecutor {
  constructor() {
    this.canceled = new Set(); // running tasks asked to stop
    this.wakeups = new Map(); // taskId -> ends the wait of a running task
    this.waitingForInput = new Map(); // taskId -> contextId of a task left in INPUT_REQUIRED
  }

  async execute(requestContext, bus) {
    const message = requestContext.userMessage;
    const existing = requestContext.task;
    const { taskId, contextId } = requestContext;
    const text = userText(message);
    const behaviour = behaviourFor(text);

    if (!existing && behaviour === 'reply') {
      bus.publish(
        AgentEvent.message({
          messageId: randomUUID(),
          role: Role.ROLE_AGENT,
          parts: [textPart(`You said: ${text}`)],
          contextId,
          taskId: '',
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }),
      );
      return;
    }

    // Every turn starts with the Task (the SDK requires it, follow-ups included).
    bus.publish(
      AgentEvent.task(
        existing ?? {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [message],
          metadata: undefined,
        },
      ),
    );
    const events = new TaskEvents(bus, taskId, contextId);
    events.status(TaskState.TASK_STATE_WORKING);

    if (existing && existing.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      this.waitingForInput.delete(taskId);
      events.artifact([textPart(text)], { name: 'echo' });
      events.status(TaskState.TASK_STATE_COMPLETED, 'Thanks, done.');
      return;
    }

    try {
      switch (behaviour) {
        case 'long':
          await this.waitOrCancel(taskId, LONG_RUN_MS);
          if (this.canceled.has(taskId)) {
            events.status(TaskState.TASK_STATE_CANCELED, 'Canceled as asked.');
            return;
          }
          events.artifact([textPart(text)], { name: 'echo' });
          events.status(TaskState.TASK_STATE_COMPLETED);
          return;
        case 'input':
          this.waitingForInput.set(taskId, contextId);
          events.status(TaskState.TASK_STATE_INPUT_REQUIRED, 'I need more input: what should I echo?');
          return;
        case 'fail':
          events.status(TaskState.TASK_STATE_FAILED, 'Sorry, that failed as asked.');
          return;
        case 'reject':
          events.status(TaskState.TASK_STATE_REJECTED, 'I reject this request.');
          return;
        case 'chunks':
          events.artifact([textPart('first chunk, ')], { artifactId: 'chunked', name: 'chunked', lastChunk: false });
          await sleep(100);
          events.artifact([textPart('second chunk')], {
            artifactId: 'chunked',
            name: 'chunked',
            append: true,
            lastChunk: true,
          });
          events.status(TaskState.TASK_STATE_COMPLETED);
          return;
        case 'data':
          events.artifact(
            [{ content: { $case: 'data', value: { echo: text } }, metadata: undefined, filename: '', mediaType: '' }],
            { name: 'data' },
          );
          events.status(TaskState.TASK_STATE_COMPLETED);
          return;
        case 'file':
          events.artifact(
            [
              {
                content: { $case: 'raw', value: Buffer.from(text, 'utf8') },
                metadata: undefined,
                filename: 'echo.txt',
                mediaType: 'text/plain',
              },
            ],
            { name: 'file' },
          );
          events.status(TaskState.TASK_STATE_COMPLETED);
          return;
        default:
          events.artifact([textPart(text)], { name: 'echo' });
          events.status(TaskState.TASK_STATE_COMPLETED, 'Done.');
      }
    } finally {
      this.canceled.delete(taskId);
    }
  }

  // Called by DefaultRequestHandler on CancelTask, which waits for a terminal event on the bus.
  // A running task is told to stop and publishes CANCELED from execute(); a task waiting for
  // input has no execute() running, so the CANCELED status is published here.
  async cancelTask(taskId, bus) {
    const wake = this.wakeups.get(taskId);
    if (wake) {
      this.canceled.add(taskId);
      wake();
      return;
    }
    const contextId = this.waitingForInput.get(taskId);
    if (contextId !== undefined) {
      this.waitingForInput.delete(taskId);
      new TaskEvents(bus, taskId, contextId).status(TaskState.TASK_STATE_CANCELED, 'Canceled as asked.');
    }
  }

  waitOrCancel(taskId, ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeups.delete(taskId);
        resolve();
      }
      this.wakeups.set(taskId, done);
    });
  }
}

// Every member the SDK's AgentCard type requires is spelled out, as a TypeScript author has to.
function buildCard(port, extended) {
  return {
    name: 'interop echo agent (@a2a-js/sdk)',
    description: 'Echoes what it is told; keywords select other task outcomes.',
    provider: { organization: 'a2a-conform interop corpus', url: 'https://a2a-protocol.org' },
    version: '1.0.0',
    supportedInterfaces: [
      { url: `http://${HOST}:${port}${RPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    ],
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: extended, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'echo',
        name: 'Echo',
        description: 'Echoes the text back as an artifact.',
        tags: ['echo', 'test'],
        examples: ['hello', 'please wait', 'need input', 'chunks', 'data', 'file'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

async function main() {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '0' }, 'extended-card': { type: 'boolean', default: false } },
  });
  const extended = values['extended-card'];
  const app = express();
  const server = app.listen(Number(values.port), HOST);
  await new Promise((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const port = server.address().port;

  const card = buildCard(port, extended);
  const pushStore = new InMemoryPushNotificationStore();
  const requestHandler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new EchoExecutor(),
    undefined,
    pushStore,
    new DefaultPushNotificationSender(pushStore),
    extended ? card : undefined,
  );
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(RPC_PATH, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));

  process.stdout.write(`listening on http://${HOST}:${port}\n`);
  // Open SSE streams would hold server.close() up: leave at once.
  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
