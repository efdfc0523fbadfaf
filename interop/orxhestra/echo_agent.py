"""A model-free echo agent served by orxhestra's A2A server (orxhestra 0.1.8, pinned in requirements.txt).

orxhestra is a multi-agent framework on LangChain; its A2A support is
`orxhestra.a2a.server.A2AServer`, which adapts any `BaseAgent` to a FastAPI app with the
JSON-RPC endpoint at `POST /` and the card at `/.well-known/agent-card.json`. This file adds
only what every orxhestra user writes: an agent class (here `EchoAgent`, a `BaseAgent` whose
reply is computed from the input text: no LLM, no network) and the server's constructor
arguments. The wire format, task store, push store and webhook dispatcher are orxhestra's own
defaults, used as they come; nothing here speaks A2A by hand.

What the server lets an agent do is narrow: it hands the agent the message's joined text parts
and nothing else (no task id, no history), turns the agent's last final answer into one text
artifact and the status message, and always ends the task COMPLETED. So of the corpus's echo
behaviours (interop/README.md, "The echo agents") only these exist here:

    please wait  about 3 s before the answer (the task is WORKING meanwhile), then the echo
    (otherwise)  the echo: one text artifact with the input text, COMPLETED

`need input`, `just reply`, `chunks`, `reject`, `fail`, `data` and `file` cannot be built on
this server (see interop/README.md, "Notes on the pinned SDKs"); their keywords get the echo.

Usage: python echo_agent.py --port PORT   (0 picks a free port). The first line on stdout is
`listening on http://127.0.0.1:PORT` once the server accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import socket
import sys

from collections.abc import AsyncIterator

import uvicorn

from orxhestra.a2a.server import A2AServer
from orxhestra.a2a.types import AgentProvider, AgentSkill
from orxhestra.agents.base_agent import BaseAgent
from orxhestra.events.event import Event, EventType
from orxhestra.models.part import Content
from orxhestra.sessions.in_memory_session_service import InMemorySessionService

HOST = '127.0.0.1'
LONG_RUN_SECONDS = 3.0


def behaviour_for(text: str) -> str:
    if re.search(r'\bplease wait\b', text.lower()):
        return 'long'
    return 'echo'


class EchoAgent(BaseAgent):
    """Answers with the text it was given; `please wait` makes it take about 3 s first."""

    async def astream(self, input: str, config=None, *, ctx=None) -> AsyncIterator[Event]:
        ctx = self._ensure_ctx(config, ctx)
        if behaviour_for(input) == 'long':
            await asyncio.sleep(LONG_RUN_SECONDS)
        yield self._emit_event(ctx, EventType.AGENT_MESSAGE, content=Content.from_text(input))


def build_server(port: int, extended: bool) -> A2AServer:
    agent = EchoAgent(
        name='interop echo agent (orxhestra)',
        description='Echoes what it is told; "please wait" makes it take about 3 s.',
    )
    return A2AServer(
        agent,
        session_service=InMemorySessionService(),
        app_name='interop-echo',
        version='1.0.0',
        # The card's one interface; orxhestra serves JSON-RPC at POST / of its app.
        url=f'http://{HOST}:{port}/',
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Echoes the text back as an artifact.',
                tags=['echo', 'test'],
                examples=['hello', 'please wait'],
            )
        ],
        provider=AgentProvider(organization='a2a-conform interop corpus', url='https://a2a-protocol.org'),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        # orxhestra declares capabilities.extendedAgentCard exactly when extras are given.
        extended_card_extras={'description': 'Echoes what it is told (extended card).'} if extended else None,
        # The dispatcher's SSRF guard refuses http:// and loopback webhooks by default; the kit's
        # receiver is http://127.0.0.1, so the guard is off here (the other peers have none).
        allow_insecure_webhooks=True,
    )


async def serve(port: int, extended: bool) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    port = sock.getsockname()[1]

    app = build_server(port, extended).as_fastapi_app()
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
        help='give orxhestra extended-card extras, so that the card declares capabilities.extendedAgentCard',
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        asyncio.run(serve(args.port, args.extended_card))
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
