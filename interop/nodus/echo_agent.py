"""A one-tool agent served by nodus-a2a-wire (0.1.0, pinned in requirements.txt).

nodus-a2a-wire exposes a tool registry as an A2A 1.0 agent: `A2AHttpServer` (stdlib
ThreadingHTTPServer, HTTP+JSON binding only) answers `POST /message:send` by calling one tool and
wrapping what it returns in a Message; it never creates a Task (the package calls itself
"message-only"), and every other operation is answered HTTP 501. This file adds only what a host
of the library writes: a tool registry with one tool, the server's configuration, and a main.
The wire format, card and dispatch are the library's own; nothing here speaks A2A by hand.

The tool, `interop.echo`: the library calls it with the `args` of a DataPart that names it
(`{"data": {"tool": "interop.echo", "args": {"text": "..."}}}`), and, because it is the only
tool, with `{}` for any other message (a plain text part included: the tool never sees that text).
So:

    DataPart naming the tool with args.text   a Message "You said: <text>"
    anything else                             a Message with the fixed reply below

No Task, no streaming, no push, no cancel: the library has none of them (interop/README.md,
"The echo agents").

Usage: python echo_agent.py --port PORT   (0 picks a free port). The first line on stdout is
`listening on http://127.0.0.1:PORT` once the server accepts connections. No token validator
is configured (the library's dev mode: every request is accepted), as for the other peers.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import time

from nodus_a2a_wire import A2AHttpServer, ServerConfig

HOST = '127.0.0.1'
TOOL = 'interop.echo'
FIXED_REPLY = 'Hello from the nodus-a2a-wire echo agent. Name the tool in a data part to be echoed.'


def echo(args: dict) -> str:
    text = args.get('text') if isinstance(args, dict) else None
    if isinstance(text, str) and text:
        return f'You said: {text}'
    return FIXED_REPLY


# The registry, in the shape of the entries the library's card projection reads
# (name, description, tags, metadata.examples), and the invoke callable its handler calls.
TOOLS = [
    {
        'name': TOOL,
        'description': 'Answers every message with a Message: a fixed reply, or "You said: <text>" '
        'for a data part {"tool": "interop.echo", "args": {"text": "..."}}.',
        'tags': ['echo', 'interop'],
        'metadata': {'examples': ['hello', 'just reply']},
        'handler': echo,
    },
]


def invoke(name: str, args: dict) -> object:
    for tool in TOOLS:
        if tool['name'] == name:
            return tool['handler'](args)
    raise KeyError(name)


def free_port() -> int:
    # The card carries the base URL, which the library fixes when the server is built, before it
    # binds: so the port is chosen first (bound and released at once; nothing else races here).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_accepting(port: int, bound: float = 10.0) -> None:
    deadline = time.monotonic() + bound
    while True:
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--port', type=int, default=0, help='port on 127.0.0.1 (0 picks a free one)')
    args = parser.parse_args()
    port = args.port or free_port()
    config = ServerConfig(
        base_url=f'http://{HOST}:{port}',
        agent_name='interop echo agent (nodus-a2a-wire)',
        agent_description='Answers every message with a Message: a fixed reply, or the text of a '
        'data part that names its one tool.',
        agent_version='1.0.0',
        provider_org='a2a-conform interop corpus',
        provider_url='https://example.com/a2a-conform',
        host=HOST,
        port=port,
    )
    server = A2AHttpServer(
        config=config,
        invoke=invoke,
        tool_names=[t['name'] for t in TOOLS],
        tools=[{k: v for k, v in t.items() if k != 'handler'} for t in TOOLS],
    )

    def stop(signum: int, _frame: object) -> None:
        server.close()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    thread = server.serve_in_thread()
    wait_accepting(port)
    print(f'listening on http://{HOST}:{port}', flush=True)
    while thread.is_alive():
        thread.join(0.5)
    return 0


if __name__ == '__main__':
    sys.exit(main())
