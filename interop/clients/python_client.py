"""Drives every A2A 1.0 method through the official Python SDK's client (a2a-sdk).

Usage: python_client.py URL [--token TOKEN] [--timeout SECS]

URL is an agent's base URL (its card is read from /.well-known/agent-card.json). It is meant to
be `a2a-conform mock --extended-card-token TOKEN --allow-loopback-webhooks`, whose ACTS prefixes
(`tck-complete-task`, `tck-stream-chunked`, `tck-cancel`) pick what each task does.

Prints one line per method, `ok METHOD: detail` or `FAIL METHOD: reason` (or `skip METHOD: why`),
and exits 1 if any method failed.
"""

import argparse
import asyncio
import sys
import uuid

from collections.abc import Awaitable, Callable

import httpx

from google.protobuf.json_format import MessageToDict

from a2a.client import ClientCallContext, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)

WEBHOOK = 'http://127.0.0.1:9/a2a-conform-interop-webhook'


class Report:
    def __init__(self) -> None:
        self.failed = 0

    def ok(self, method: str, detail: str) -> None:
        print(f'ok {method}: {detail}', flush=True)

    def fail(self, method: str, reason: str) -> None:
        self.failed += 1
        print(f'FAIL {method}: {reason}', flush=True)


def user_message(text: str, task_id: str = '', context_id: str = '') -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            parts=[Part(text=text)],
            task_id=task_id,
            context_id=context_id,
        )
    )


def state_name(state: int) -> str:
    return TaskState.Name(state)


def describe(error: BaseException) -> str:
    text = f'{type(error).__name__}: {error}'.replace('\n', ' ')
    return text[:300]


async def run(url: str, token: str, timeout: float) -> int:
    report = Report()
    http = httpx.AsyncClient(timeout=timeout)
    # Two clients over the same card: the SDK picks blocking or streaming per client config.
    blocking = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
    streaming = await create_client(url, ClientConfig(streaming=True, httpx_client=http))

    async def step(method: str, body: Callable[[], Awaitable[str]]) -> None:
        try:
            report.ok(method, await asyncio.wait_for(body(), timeout))
        except Exception as error:  # noqa: BLE001 - every failure is reported, none is fatal
            report.fail(method, describe(error))

    completed: dict[str, str] = {}

    async def send_message() -> str:
        events = [e async for e in blocking.send_message(user_message('tck-complete-task hello'))]
        if len(events) != 1 or not events[0].HasField('task'):
            raise AssertionError(f'expected one Task, got {[MessageToDict(e) for e in events]}')
        task = events[0].task
        if task.status.state != TaskState.TASK_STATE_COMPLETED:
            raise AssertionError(f'task ended {state_name(task.status.state)}')
        completed['id'] = task.id
        return f'task {task.id} {state_name(task.status.state)}'

    async def send_streaming_message() -> str:
        kinds = []
        last_state = None
        async for event in streaming.send_message(user_message('tck-stream-chunked go')):
            kind = event.WhichOneof('payload')
            kinds.append(kind)
            if kind == 'status_update':
                last_state = event.status_update.status.state
        if not kinds or kinds[0] != 'task':
            raise AssertionError(f'stream did not start with a task: {kinds}')
        if 'artifact_update' not in kinds or last_state != TaskState.TASK_STATE_COMPLETED:
            raise AssertionError(f'events {kinds}, last state {last_state}')
        return f'{len(kinds)} events, ending {state_name(last_state)}'

    async def get_task() -> str:
        if 'id' not in completed:
            raise AssertionError('no task from SendMessage to read')
        task = await blocking.get_task(GetTaskRequest(id=completed['id'], history_length=1))
        if task.id != completed['id']:
            raise AssertionError(f'asked for {completed["id"]}, got {task.id}')
        return f'task {task.id} {state_name(task.status.state)}, {len(task.history)} history message(s)'

    async def list_tasks() -> str:
        page = await blocking.list_tasks(ListTasksRequest(page_size=10))
        ids = [t.id for t in page.tasks]
        if completed.get('id') not in ids:
            raise AssertionError(f'task {completed.get("id")} not among {ids}')
        return f'{len(ids)} task(s), totalSize {page.total_size}'

    await step('SendMessage', send_message)
    await step('SendStreamingMessage', send_streaming_message)
    await step('GetTask', get_task)
    await step('ListTasks', list_tasks)

    # A task that waits to be canceled: push config CRUD, a subscriber, then the cancel.
    waiting: dict[str, str] = {}
    try:
        request = user_message('tck-cancel wait')
        request.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
        events = [e async for e in blocking.send_message(request)]
        waiting['id'] = events[0].task.id
    except Exception as error:  # noqa: BLE001
        print(f'# could not start a cancelable task: {describe(error)}', flush=True)

    subscriber: asyncio.Task[list[str]] | None = None
    if 'id' in waiting:

        async def collect() -> list[str]:
            seen = []
            async for event in streaming.subscribe(SubscribeToTaskRequest(id=waiting['id'])):
                kind = event.WhichOneof('payload')
                if kind == 'status_update':
                    seen.append(state_name(event.status_update.status.state))
                else:
                    seen.append(kind)
            return seen

        subscriber = asyncio.create_task(collect())
        await asyncio.sleep(0.3)

    config_ids: dict[str, str] = {}

    async def create_config() -> str:
        created = await blocking.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=waiting['id'], url=WEBHOOK, token='interop-token')
        )
        if not created.id or created.url != WEBHOOK:
            raise AssertionError(f'got {MessageToDict(created)}')
        config_ids['id'] = created.id
        return f'config {created.id}'

    async def get_config() -> str:
        got = await blocking.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=waiting['id'], id=config_ids['id'])
        )
        if got.id != config_ids['id'] or got.url != WEBHOOK:
            raise AssertionError(f'got {MessageToDict(got)}')
        return f'config {got.id} {got.url}'

    async def list_configs() -> str:
        listed = await blocking.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=waiting['id'])
        )
        ids = [c.id for c in listed.configs]
        if config_ids['id'] not in ids:
            raise AssertionError(f'config {config_ids["id"]} not among {ids}')
        return f'{len(ids)} config(s)'

    async def delete_config() -> str:
        await blocking.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=waiting['id'], id=config_ids['id'])
        )
        listed = await blocking.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=waiting['id'])
        )
        if config_ids['id'] in [c.id for c in listed.configs]:
            raise AssertionError('config still listed after delete')
        return f'config {config_ids["id"]} gone'

    async def cancel_task() -> str:
        task = await blocking.cancel_task(CancelTaskRequest(id=waiting['id']))
        if task.status.state != TaskState.TASK_STATE_CANCELED:
            raise AssertionError(f'task is {state_name(task.status.state)}')
        return f'task {task.id} {state_name(task.status.state)}'

    async def subscribe_to_task() -> str:
        if subscriber is None:
            raise AssertionError('no subscription was opened')
        seen = await subscriber
        if not seen or seen[0] != 'task' or seen[-1] != 'TASK_STATE_CANCELED':
            raise AssertionError(f'events {seen}')
        return f'events {seen}'

    async def need(key: dict[str, str], what: str) -> None:
        if 'id' not in key:
            raise AssertionError(f'no {what}')

    for method, body, prerequisite in [
        ('CreateTaskPushNotificationConfig', create_config, (waiting, 'cancelable task')),
        ('GetTaskPushNotificationConfig', get_config, (config_ids, 'push config')),
        ('ListTaskPushNotificationConfigs', list_configs, (config_ids, 'push config')),
        ('DeleteTaskPushNotificationConfig', delete_config, (config_ids, 'push config')),
        ('CancelTask', cancel_task, (waiting, 'cancelable task')),
        ('SubscribeToTask', subscribe_to_task, (waiting, 'cancelable task')),
    ]:

        async def guarded(body=body, prerequisite=prerequisite) -> str:
            await need(*prerequisite)
            return await body()

        await step(method, guarded)

    async def extended_card() -> str:
        context = ClientCallContext(service_parameters={'Authorization': f'Bearer {token}'})
        card = await blocking.get_extended_agent_card(GetExtendedAgentCardRequest(), context=context)
        if not card.name:
            raise AssertionError('card has no name')
        return f'card "{card.name}" with {len(card.skills)} skill(s)'

    await step('GetExtendedAgentCard', extended_card)

    await blocking.close()
    await streaming.close()
    await http.aclose()
    return 1 if report.failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('url')
    parser.add_argument('--token', default='T', help='bearer token for GetExtendedAgentCard')
    parser.add_argument('--timeout', type=float, default=15.0, help='bound on each method')
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.url, args.token, args.timeout)))


if __name__ == '__main__':
    main()
