"""An ordinary echo agent built on the official A2A Python SDK (a2a-sdk, pinned in requirements.txt).

It serves the A2A 1.0 JSON-RPC binding with the SDK's own stack: Starlette routes from
`a2a.server.routes`, the default request handler, the in-memory task store and push
notification config store, and `TaskUpdater` for every state change. Nothing here speaks the
wire format by hand.

What it does is chosen by keywords in the user's text (whole words, case-insensitive):

    please wait  WORKING for about 3 s, then COMPLETED; cancelable (ends CANCELED)
    need input   INPUT_REQUIRED with a question; the next message on the task completes it
    fail         FAILED with an agent message
    reject       REJECTED with an agent message
    just reply   a Message instead of a Task
    chunks       a text artifact streamed in two chunks (append, lastChunk), then COMPLETED
    data         COMPLETED with a data artifact {"echo": <text>}
    file         COMPLETED with a small text/plain file artifact (raw bytes, filename)
    (otherwise)  WORKING, then COMPLETED with one text artifact echoing the text

Usage: python echo_agent.py --port PORT   (0 picks a free port). The first line on stdout is
`listening on http://127.0.0.1:PORT` once the server accepts connections.
"""

import argparse
import asyncio
import logging
import re
import socket
import sys

import httpx
import uvicorn

from starlette.applications import Starlette

from a2a.helpers.proto_helpers import (
    new_data_part,
    new_raw_part,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)

HOST = '127.0.0.1'
RPC_PATH = '/a2a/jsonrpc'
REST_PATH = '/a2a/rest'
LONG_RUN_SECONDS = 3.0

# Checked in this order; the first keyword found in the text decides.
KEYWORDS = [
    ('please wait', 'long'),
    ('need input', 'input'),
    ('just reply', 'reply'),
    ('chunks', 'chunks'),
    ('reject', 'reject'),
    ('fail', 'fail'),
    ('data', 'data'),
    ('file', 'file'),
]


def behaviour_for(text: str) -> str:
    lowered = text.lower()
    for keyword, behaviour in KEYWORDS:
        if re.search(r'\b' + re.escape(keyword) + r'\b', lowered):
            return behaviour
    return 'echo'


class EchoExecutor(AgentExecutor):
    """Turns one user message into task events through the SDK's TaskUpdater."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        behaviour = behaviour_for(text)

        if task is None and behaviour == 'reply':
            await event_queue.enqueue_event(
                new_text_message(f'You said: {text}', context_id=context.context_id)
            )
            return

        if task is None:
            # A new task: the SDK wants the Task itself before any update. Not for a follow-up:
            # re-enqueueing the stored task (INPUT_REQUIRED) would make a blocking SendMessage
            # return at once with that stale state, so a streamed follow-up starts with a status
            # update instead (see interop/README.md, python-sdk notes).
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )

        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()

        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            # The answer to our question: echo it and finish.
            await updater.add_artifact([new_text_part(text)], name='echo')
            await updater.complete(updater.new_agent_message([new_text_part('Thanks, done.')]))
            return

        if behaviour == 'long':
            # A cancel makes the SDK cancel this coroutine and call cancel() below.
            await asyncio.sleep(LONG_RUN_SECONDS)
            await updater.add_artifact([new_text_part(text)], name='echo')
            await updater.complete()
        elif behaviour == 'input':
            await updater.requires_input(
                updater.new_agent_message([new_text_part('I need more input: what should I echo?')])
            )
        elif behaviour == 'fail':
            await updater.failed(
                updater.new_agent_message([new_text_part('Sorry, that failed as asked.')])
            )
        elif behaviour == 'reject':
            await updater.reject(
                updater.new_agent_message([new_text_part('I reject this request.')])
            )
        elif behaviour == 'chunks':
            await updater.add_artifact(
                [new_text_part('first chunk, ')],
                artifact_id='chunked',
                name='chunked',
                append=False,
                last_chunk=False,
            )
            await asyncio.sleep(0.1)
            await updater.add_artifact(
                [new_text_part('second chunk')],
                artifact_id='chunked',
                name='chunked',
                append=True,
                last_chunk=True,
            )
            await updater.complete()
        elif behaviour == 'data':
            await updater.add_artifact([new_data_part({'echo': text})], name='data')
            await updater.complete()
        elif behaviour == 'file':
            await updater.add_artifact(
                [new_raw_part(text.encode('utf-8'), media_type='text/plain', filename='echo.txt')],
                name='file',
            )
            await updater.complete()
        else:
            await updater.add_artifact([new_text_part(text)], name='echo')
            await updater.complete(updater.new_agent_message([new_text_part('Done.')]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or '', context.context_id or '')
        await updater.cancel(updater.new_agent_message([new_text_part('Canceled as asked.')]))


def build_card(port: int, extended: bool, rest: bool) -> AgentCard:
    return AgentCard(
        name='interop echo agent (a2a-sdk Python)',
        description='Echoes what it is told; keywords select other task outcomes.',
        provider=AgentProvider(organization='a2a-conform interop corpus', url='https://a2a-protocol.org'),
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(
                protocol_binding='JSONRPC',
                protocol_version='1.0',
                url=f'http://{HOST}:{port}{RPC_PATH}',
            )
        ]
        + (
            [AgentInterface(protocol_binding='HTTP+JSON', protocol_version='1.0', url=f'http://{HOST}:{port}{REST_PATH}')]
            if rest
            else []
        ),
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extended_agent_card=extended,
        ),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain', 'application/json'],
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Echoes the text back as an artifact.',
                tags=['echo', 'test'],
                examples=['hello', 'please wait', 'need input', 'chunks', 'data', 'file'],
            )
        ],
    )


async def serve(port: int, extended: bool, rest: bool) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    port = sock.getsockname()[1]

    card = build_card(port, extended, rest)
    push_store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(timeout=5.0), push_store),
        extended_agent_card=card if extended else None,
    )
    app = Starlette(
        routes=create_agent_card_routes(card)
        + create_jsonrpc_routes(request_handler=handler, rpc_url=RPC_PATH)
        + (create_rest_routes(request_handler=handler, path_prefix=REST_PATH) if rest else [])
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            await serving
            return
        await asyncio.sleep(0.02)
    print(f'listening on http://{HOST}:{port}', flush=True)
    await serving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument(
        '--extended-card',
        action='store_true',
        help='declare capabilities.extendedAgentCard and serve the same card from GetExtendedAgentCard',
    )
    parser.add_argument(
        '--no-rest',
        action='store_true',
        help='serve and declare only the JSON-RPC binding (by default the SDK\'s HTTP+JSON app too, at ' + REST_PATH + ')',
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        asyncio.run(serve(args.port, args.extended_card, not args.no_rest))
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
