"""The interop corpus runner (started by interop/run; see interop/README.md).

For each peer in interop/peers/: start it, grade it with `a2a-conform check` (plain, then again
against the same process, which must give the same outcome for every check and no error; then,
started afresh, with the peer's behaviour map), compare each report's fail / warn / error sets
with the peer's expected.yaml, and stop it. Then grade each SDK's client with `a2a-conform client-check`
under each client run's scenarios, comparing its findings with interop/clients/expected/NAME.yaml.
Prints a summary and exits 1 on any difference from what is expected (2 on a usage error).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from dataclasses import dataclass, field
from pathlib import Path

import yaml

INTEROP = Path(__file__).resolve().parent
ROOT = INTEROP.parent
PEERS = INTEROP / 'peers'
OUTCOMES = ('fail', 'warn', 'error')
RUNS = ('plain', 'mapped')
# expected.yaml's hand-counted root causes and the known gaps of the kit's grouping.
CAUSE_KEYS = ('causes', 'cause_gaps')
TARGETS = {'plain': 0.90, 'mapped': 0.90}
# Skips that say the check does not apply to this peer: left out of the graded share.
NOT_APPLICABLE = {'capability_not_declared', 'freedom_taken', 'profile_not_selected', 'filtered'}
MOCK_TOKEN = 'interop-extended-card-token'

LISTEN_LINE = re.compile(r'^listening on (https?://\S+)\s*$')


def log(line: str = '') -> None:
    print(line, flush=True)


# --------------------------------------------------------------------------- processes


class Server:
    """A child process that prints `listening on URL` first, in its own process group."""

    def __init__(self, name: str, argv: list[str], log_path: Path, cwd: Path = ROOT):
        self.name = name
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(log_path, 'w', encoding='utf-8')  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
            self.log.write(line)
            self.log.flush()
        self.lines.put(None)

    def wait_url(self, bound: float) -> str:
        deadline = time.monotonic() + bound
        first = True
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f'{self.name}: no "listening on URL" line within {bound:.0f} s')
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(
                    f'{self.name}: exited with {self.proc.wait()} before printing "listening on URL"'
                    f' (see {self.log.name})'
                )
            match = LISTEN_LINE.match(line)
            if match:
                if not first:
                    log(f'  note: {self.name} printed other lines before "listening on"')
                return match.group(1)
            first = False

    def stop(self, bound: float = 5.0) -> None:
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, bound), (signal.SIGKILL, bound)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.log.close()


LIVE: list[Server] = []
RUNNING: set[subprocess.Popen] = set()  # bounded commands (kit checks, clients) in their own groups


def stop_all(*_args: object) -> None:
    for proc in list(RUNNING):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while LIVE:
        LIVE.pop().stop()


def start_server(name: str, argv: list[str], log_path: Path, bound: float) -> tuple[Server, str]:
    server = Server(name, argv, log_path)
    LIVE.append(server)
    try:
        return server, server.wait_url(bound)
    except Exception:
        server.stop()
        LIVE.remove(server)
        raise


def stop_server(server: Server) -> None:
    server.stop()
    if server in LIVE:
        LIVE.remove(server)


def run_bounded(argv: list[str], log_path: Path, bound: float, cwd: Path = ROOT) -> tuple[int | None, str]:
    """Runs a command, stdout+stderr into log_path; returns (exit code or None on timeout, output)."""
    with open(log_path, 'w', encoding='utf-8') as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        RUNNING.add(proc)
        try:
            code: int | None = proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        finally:
            if proc.poll() is None:  # interrupted: leave nothing behind
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            RUNNING.discard(proc)
    return code, log_path.read_text(encoding='utf-8', errors='replace')


# --------------------------------------------------------------------------- expectations


class ExpectationError(Exception):
    pass


def load_expected(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    """expected.yaml: {plain|mapped: {fail|warn|error|unstable: {check id: justification}}}."""
    if not path.exists():
        raise ExpectationError(f'{path} is missing')
    data = yaml.safe_load(path.read_text(encoding='utf-8')) or {}
    if not isinstance(data, dict) or set(data) - {*RUNS, *CAUSE_KEYS}:
        raise ExpectationError(f'{path}: top-level keys must be among {(*RUNS, *CAUSE_KEYS)}')
    result: dict[str, dict[str, dict[str, str]]] = {}
    for run, sections in data.items():
        if run in CAUSE_KEYS:
            continue
        sections = sections or {}
        if not isinstance(sections, dict) or set(sections) - {*OUTCOMES, 'unstable'}:
            raise ExpectationError(f'{path}: {run}: keys must be among fail, warn, error, unstable')
        result[run] = {}
        for outcome in (*OUTCOMES, 'unstable'):
            entries = sections.get(outcome) or {}
            if not isinstance(entries, dict):
                raise ExpectationError(f'{path}: {run}.{outcome} must map check ids to a justification')
            for check_id, why in entries.items():
                if not isinstance(why, str) or not why.strip():
                    raise ExpectationError(f'{path}: {run}.{outcome}.{check_id} has no justification')
                if outcome != 'unstable' and '§' not in why:
                    raise ExpectationError(
                        f'{path}: {run}.{outcome}.{check_id}: quote the spec sentence with its section (§N)'
                    )
            result[run][outcome] = {str(k): v for k, v in entries.items()}
    result['causes'] = load_causes(path, data, result)
    return result


def load_causes(path: Path, data: dict, runs: dict) -> dict:
    """expected.yaml `causes:` (the agent's root causes, counted by hand from its defects: slug ->
    {title, checks}) and `cause_gaps:` (known differences of the kit's grouping, each with its
    reason): every expected finding of either run belongs to exactly one cause."""
    causes = data.get('causes') or {}
    gaps = data.get('cause_gaps') or {}
    if not isinstance(causes, dict) or not isinstance(gaps, dict):
        raise ExpectationError(f'{path}: causes and cause_gaps must be maps')
    findings = {c for run in runs.values() for o in OUTCOMES for c in run.get(o, {})}
    owner: dict[str, str] = {}
    for slug, cause in causes.items():
        if not isinstance(cause, dict) or not str(cause.get('title') or '').strip():
            raise ExpectationError(f'{path}: causes.{slug} needs a title')
        for check_id in cause.get('checks') or []:
            if check_id in owner:
                raise ExpectationError(f'{path}: {check_id} is in causes {owner[check_id]} and {slug}')
            if check_id not in findings:
                raise ExpectationError(f'{path}: causes.{slug}: {check_id} is no expected fail, warn or error')
            owner[check_id] = str(slug)
    if causes and findings - set(owner):
        raise ExpectationError(f'{path}: expected findings in no cause: {sorted(findings - set(owner))}')
    for key, why in gaps.items():
        if not isinstance(why, str) or not why.strip():
            raise ExpectationError(f'{path}: cause_gaps.{key} has no reason')
    return {'owner': owner, 'gaps': {str(k): v for k, v in gaps.items()}}


# --------------------------------------------------------------------------- one check run


@dataclass
class RunResult:
    peer: str
    run: str
    status: str = 'ok'  # ok | differs | unsupported | broken
    lines: list[str] = field(default_factory=list)
    share: tuple[int, int] | None = None
    # (the kit's causes holding an expected finding, the recorded causes the run's findings name)
    causes: tuple[int, int] | None = None
    skips: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def observed_sets(report: dict) -> tuple[dict[str, dict[str, str]], dict[str, dict]]:
    by_outcome: dict[str, dict[str, str]] = {o: {} for o in OUTCOMES}
    by_id = {}
    for result in report.get('results', []):
        by_id[result['id']] = result
        if result.get('outcome') in OUTCOMES:
            message = (result.get('failure') or {}).get('message') or result.get('title') or ''
            by_outcome[result['outcome']][result['id']] = ' '.join(message.split())
    return by_outcome, by_id


def graded_share(report: dict) -> tuple[tuple[int, int], dict[str, int], dict[str, int]]:
    graded = applicable = 0
    skips: dict[str, int] = {}
    counts: dict[str, int] = {}
    for result in report.get('results', []):
        outcome = result.get('outcome')
        counts[outcome] = counts.get(outcome, 0) + 1
        if not result.get('scored') or outcome == 'info':
            continue
        if outcome == 'skip':
            reason = result.get('skip_reason') or 'unknown'
            if reason in NOT_APPLICABLE:
                continue
            skips[reason] = skips.get(reason, 0) + 1
        applicable += 1
        if outcome in ('pass', 'fail', 'warn'):
            graded += 1
    return (graded, applicable), skips, counts


def short(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 1] + '…'


def compare(
    result: RunResult, expected: dict[str, dict[str, str]] | None, report: dict
) -> None:
    seen, by_id = observed_sets(report)
    unstable = (expected or {}).get('unstable', {})
    if expected is None:
        result.status = 'differs'
        result.lines.append(f'no expectation recorded for the {result.run} run in expected.yaml')
    diffs = []
    for outcome in OUTCOMES:
        want = (expected or {}).get(outcome, {})
        got = seen[outcome]
        for check_id in sorted(set(got) - set(want) - set(unstable)):
            diffs.append(f'unexpected {outcome} {check_id}: {short(got[check_id])}')
        for check_id in sorted(set(want) - set(got) - set(unstable)):
            now = by_id.get(check_id, {}).get('outcome', 'absent from the report')
            now = 'passes' if now == 'pass' else f'is {now}'
            diffs.append(f'expected {outcome} {check_id} now {now}')
    for check_id in sorted(unstable):
        now = by_id.get(check_id, {}).get('outcome', 'absent')
        result.lines.append(f'unstable, not compared: {check_id} is {now}')
    if diffs:
        result.status = 'differs'
        result.lines = diffs + result.lines


def compare_causes(result: RunResult, expected: dict | None, causes: dict, report: dict) -> None:
    """The kit's causes against the ones counted by hand: a kit cause that holds the findings of
    two recorded causes is mixed, a recorded cause whose findings are in two kit causes is split.
    Only expected findings are read (an info or an unstable check names no recorded cause)."""
    owner = causes['owner']
    if not owner:
        return
    expected_ids = {c for o in OUTCOMES for c in (expected or {}).get(o, {})}
    held: list[tuple[str, set[str]]] = []
    for cause in report.get('causes', []):
        named = {owner[f] for f in cause.get('findings', []) if f in expected_ids and f in owner}
        if named:
            held.append((cause.get('root', '?'), named))
    recorded = {owner[c] for c in expected_ids if c in owner}
    result.causes = (len(held), len(recorded))
    found: dict[str, list[str]] = {}
    for root, named in held:
        for slug in named:
            found.setdefault(slug, []).append(root)
    lines = []
    for root, named in held:
        if len(named) > 1:
            key = 'mixed ' + '+'.join(sorted(named))
            lines.append((key, f'{key}: the kit\'s cause {root} holds {len(named)} recorded causes'))
    for slug, roots in sorted(found.items()):
        if len(roots) > 1:
            lines.append((f'split {slug}', f'split {slug}: in {len(roots)} of the kit\'s causes ({", ".join(roots)})'))
    gaps = causes['gaps']
    for key, line in lines:
        if key in gaps:
            result.lines.append(f'known cause gap, not compared: {line}')
        else:
            result.status = 'differs'
            result.lines.insert(0, line)


def check_run(
    kit: Path, peer: Path, run: str, out: Path, expected: dict | None, args: argparse.Namespace,
    causes: dict | None = None,
) -> RunResult:
    name = peer.name
    result = RunResult(name, run)
    run_dir = out / name / run
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    started = time.monotonic()
    server = None
    try:
        server, url = start_server(
            f'{name} ({run})', [str(peer / 'start'), '--port', '0'], run_dir / 'peer.log', args.start_timeout
        )
        argv = [
            str(kit), 'check', url, '--out', str(run_dir), '--format', 'json', '--no-color',
            '--timeout', str(args.check_timeout), '--patience', str(args.patience),
        ]
        if run == 'mapped':
            argv += ['--behaviors', str((peer / 'behaviors.yaml').relative_to(ROOT))]
        code, output = run_bounded(argv, run_dir / 'check.log', args.run_bound)
        if run == 'plain' and code is not None and not args.once:
            # The same agent, not restarted: whatever the first run left behind must not change a
            # verdict of the second (issue 17: the kit leaves the agent as it found it).
            again_dir = run_dir / 'again'
            again_dir.mkdir()
            again = [*argv]
            again[again.index('--out') + 1] = str(again_dir)
            run_bounded(again, again_dir / 'check.log', args.run_bound)
    except Exception as error:  # noqa: BLE001 - reported, never fatal to the other peers
        result.status = 'broken'
        result.lines.append(str(error))
        return result
    finally:
        if server is not None:
            stop_server(server)
        result.seconds = time.monotonic() - started

    report_path = run_dir / 'report.json'
    if code is None:
        result.status = 'broken'
        result.lines.append(f'the kit did not finish within {args.run_bound:.0f} s (see {run_dir / "check.log"})')
        return result
    if code == 2 and not report_path.exists():
        first = next((line for line in output.splitlines() if line.strip()), '(no output)')
        if run == 'mapped':
            result.status = 'unsupported'
            result.lines.append(f'the kit refused --behaviors FILE (usage error, exit 2): {short(first)}')
        else:
            result.status = 'broken'
            result.lines.append(f'usage error (exit 2): {short(first)}')
        return result
    if not report_path.exists():
        result.status = 'broken'
        result.lines.append(f'exit {code} and no report.json (see {run_dir / "check.log"})')
        return result
    report = json.loads(report_path.read_text(encoding='utf-8'))
    result.share, result.skips, result.counts = graded_share(report)
    write_observed(report, run_dir / 'observed.yaml')
    compare(result, expected, report)
    if causes:
        compare_causes(result, expected, causes, report)
    again_path = run_dir / 'again' / 'report.json'
    if run == 'plain' and not args.once:
        if again_path.exists():
            unstable = set((expected or {}).get('unstable', {}))
            compare_runs(result, report, json.loads(again_path.read_text(encoding='utf-8')), unstable)
        else:
            result.status = 'differs'
            result.lines.append(f'the second run against the same peer left no report (see {again_path.parent})')
    return result


def compare_runs(result: RunResult, first: dict, second: dict, unstable: set[str]) -> None:
    """Two runs against one long-lived peer: the same outcome for every check, and no error.

    Checks the peer's expected.yaml lists as `unstable` (each with its reason) are left out."""
    one = {r['id']: r for r in first.get('results', [])}
    two = {r['id']: r for r in second.get('results', [])}
    lines = []
    for check_id in sorted((set(one) | set(two)) - unstable):
        a = one.get(check_id, {}).get('outcome', 'absent')
        b = two.get(check_id, {}).get('outcome', 'absent')
        if a != b:
            said = (two.get(check_id, {}).get('failure') or {}).get('message') or ''
            lines.append(f'second run against the same peer: {check_id} was {a}, now {b}: {short(" ".join(said.split()))}')
        elif b == 'error':
            said = (two.get(check_id, {}).get('failure') or {}).get('message') or ''
            lines.append(f'error in both runs: {check_id}: {short(" ".join(said.split()))}')
    if lines:
        result.status = 'differs'
        result.lines = lines + result.lines


def write_observed(report: dict, path: Path) -> None:
    """The run's fail / warn / error sets in expected.yaml's shape, messages as placeholders."""
    seen, _ = observed_sets(report)
    doc = {o: {k: f'TODO quote the spec (§…); kit said: {short(v, 200)}' for k, v in sorted(seen[o].items())}
           for o in OUTCOMES}
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120), encoding='utf-8')


# --------------------------------------------------------------------------- clients

CLIENTS = {
    'python-sdk': [str(INTEROP / '.venv' / 'bin' / 'python'), str(INTEROP / 'clients' / 'python_client.py')],
    'js-sdk': ['node', str(INTEROP / 'clients' / 'js_client.mjs')],
}
# Each client run: the `client-check --scenario`s it is graded under. `plain` also proves the mock
# faithful to code its authors did not write: the script must report all 11 methods ok.
CLIENT_RUNS = {
    'plain': [],
    'unknown-fields': ['unknown-fields'],
    'tenant': ['tenant'],
    'other-host': ['other-host'],
    'duplicate-event-ids': ['duplicate-event-ids'],
    'drop-stream': ['drop-stream'],
    'core-only': ['core-only'],
    'task-not-found': ['task-not-found'],
}
# A client check's findings: info ones too, since most client checks are reported, not scored.
CLIENT_OUTCOMES = ('fail', 'warn', 'error', 'info')


@dataclass
class ClientResult:
    name: str
    run: str
    status: str = 'ok'  # ok | differs | broken
    lines: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def load_client_expected(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    """clients/expected/NAME.yaml: {run: {fail|warn|error|info: {check id: justification}}}."""
    if not path.exists():
        raise ExpectationError(f'{path} is missing')
    data = yaml.safe_load(path.read_text(encoding='utf-8')) or {}
    if not isinstance(data, dict) or set(data) - set(CLIENT_RUNS):
        raise ExpectationError(f'{path}: top-level keys must be among {list(CLIENT_RUNS)}')
    result: dict[str, dict[str, dict[str, str]]] = {}
    for run, sections in data.items():
        sections = sections or {}
        if not isinstance(sections, dict) or set(sections) - set(CLIENT_OUTCOMES):
            raise ExpectationError(f'{path}: {run}: keys must be among {CLIENT_OUTCOMES}')
        result[run] = {}
        for outcome in CLIENT_OUTCOMES:
            entries = sections.get(outcome) or {}
            for check_id, why in entries.items():
                if not isinstance(why, str) or '§' not in why:
                    raise ExpectationError(f'{path}: {run}.{outcome}.{check_id}: quote the spec sentence with its section (§N)')
            result[run][outcome] = {str(k): v for k, v in entries.items()}
    return result


def client_findings(report: dict) -> tuple[dict[str, dict[str, str]], dict[str, dict]]:
    """A client-check report's findings by outcome (an `info` counts only with a failure)."""
    by_outcome: dict[str, dict[str, str]] = {o: {} for o in CLIENT_OUTCOMES}
    by_id = {}
    for result in report.get('results', []):
        by_id[result['id']] = result
        outcome = result.get('outcome')
        if outcome in CLIENT_OUTCOMES and (outcome != 'info' or result.get('failure')):
            message = (result.get('failure') or {}).get('message') or result.get('title') or ''
            by_outcome[outcome][result['id']] = ' '.join(message.split())
    return by_outcome, by_id


def script_lines(log_text: str) -> dict[str, list[str]]:
    """The script's own `ok / FAIL / skip METHOD: ...` lines, by their first word."""
    lines: dict[str, list[str]] = {'ok': [], 'FAIL': [], 'skip': []}
    for line in log_text.splitlines():
        word = line.split(' ', 1)[0]
        if word in lines:
            lines[word].append(line)
    return lines


def client_run(kit: Path, name: str, run: str, out: Path, expected: dict | None, args: argparse.Namespace) -> ClientResult:
    """Grades one SDK client with `a2a-conform client-check` under the run's scenarios."""
    result = ClientResult(name, run)
    run_dir = out / 'clients' / name / run
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    argv = [str(kit), 'client-check', '--out', str(run_dir), '--format', 'json', '--no-color', '-q',
            '--extended-card-token', MOCK_TOKEN, '--timeout', str(int(args.run_bound) - 10)]
    for scenario in CLIENT_RUNS[run]:
        argv += ['--scenario', scenario]
    argv += ['--', *CLIENTS[name], '{url}', '--token', MOCK_TOKEN]
    started = time.monotonic()
    code, output = run_bounded(argv, run_dir / 'client-check.log', args.run_bound)
    result.seconds = time.monotonic() - started
    report_path = run_dir / 'report.json'
    if code is None or not report_path.exists():
        result.status = 'broken'
        why = 'did not finish' if code is None else f'exit {code} and no report.json'
        result.lines.append(f'client-check {why} (see {run_dir / "client-check.log"}): {short(output.strip()[-300:])}')
        return result
    report = json.loads(report_path.read_text(encoding='utf-8'))
    for r in report.get('results', []):
        result.counts[r['outcome']] = result.counts.get(r['outcome'], 0) + 1
    diffs = []
    if expected is None:
        diffs.append(f'no expectation recorded for the {run} run in clients/expected/{name}.yaml')
    seen, by_id = client_findings(report)
    for outcome in CLIENT_OUTCOMES:
        want = (expected or {}).get(outcome, {})
        for check_id in sorted(set(seen[outcome]) - set(want)):
            diffs.append(f'unexpected {outcome} {check_id}: {short(seen[outcome][check_id])}')
        for check_id in sorted(set(want) - set(seen[outcome])):
            now = by_id.get(check_id, {}).get('outcome', 'absent from the report')
            diffs.append(f'expected {outcome} {check_id} now {"passes" if now == "pass" else "is " + now}')
    if run == 'plain':
        # The mock, driven by a client its authors did not write, answers every method as the SDK expects.
        client_log = run_dir / 'client.log'
        lines = script_lines(client_log.read_text(encoding='utf-8', errors='replace') if client_log.exists() else '')
        diffs += [f'the mock failed the SDK client: {line}' for line in lines['FAIL'] + lines['skip']]
        if len(lines['ok']) != 11:
            diffs.append(f'the SDK client reported {len(lines["ok"])} methods ok, expected 11 (see {client_log})')
    if diffs:
        result.status = 'differs'
        result.lines = diffs
    return result


def run_clients(kit: Path, out: Path, args: argparse.Namespace) -> list[ClientResult]:
    results = []
    for name in CLIENTS:
        try:
            expected = load_client_expected(INTEROP / 'clients' / 'expected' / f'{name}.yaml')
        except ExpectationError as error:
            results.append(ClientResult(name, '-', 'broken', [str(error)]))
            continue
        for run in CLIENT_RUNS:
            log(f'== {name} client · {run}')
            result = client_run(kit, name, run, out, expected.get(run), args)
            results.append(result)
            log(f'   {result.status} in {result.seconds:.1f} s')
    return results


# --------------------------------------------------------------------------- main


def percent(share: tuple[int, int] | None) -> str:
    if not share or not share[1]:
        return '-'
    return f'{100 * share[0] / share[1]:.0f}% ({share[0]}/{share[1]})'


def main() -> int:
    parser = argparse.ArgumentParser(prog='interop/run', description=__doc__.splitlines()[0])
    parser.add_argument('--kit', default=str(ROOT / 'target' / 'release' / 'a2a-conform'),
                        help='the a2a-conform binary (default: target/release/a2a-conform)')
    parser.add_argument('--peer', action='append', help='run only this peer (repeatable)')
    parser.add_argument('--out', default=str(INTEROP / 'out'), help='output folder (default: interop/out)')
    parser.add_argument('--no-clients', action='store_true', help='skip grading the SDK clients (client-check)')
    parser.add_argument('--no-peers', action='store_true', help='grade only the SDK clients')
    parser.add_argument('--check-timeout', type=int, default=10, help='the kit\'s --timeout (s)')
    parser.add_argument('--patience', type=int, default=5, help='the kit\'s --patience (s)')
    parser.add_argument('--start-timeout', type=float, default=30, help='bound on a peer printing its URL (s)')
    parser.add_argument('--once', action='store_true',
                        help='grade each peer once per run (default: the plain run is repeated against the same peer process)')
    parser.add_argument('--run-bound', type=float, default=170, help='bound on one kit or client run (s)')
    args = parser.parse_args()

    kit = Path(args.kit).resolve()
    if not os.access(kit, os.X_OK):
        log(f'interop: {kit} not found; run `cargo build --release` first (or pass --kit)')
        return 2
    out = Path(args.out).resolve()
    peers = [] if args.no_peers else sorted(p for p in PEERS.iterdir() if (p / 'start').exists())
    if args.peer:
        unknown = set(args.peer) - {p.name for p in peers}
        if unknown:
            log(f'interop: unknown peer(s) {sorted(unknown)}; known: {[p.name for p in peers]}')
            return 2
        peers = [p for p in peers if p.name in args.peer]

    def interrupted(signum: int, _frame: object) -> None:
        stop_all()
        log(f'interop: interrupted by signal {signum}; peers, mock and kit runs stopped')
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    started = time.monotonic()
    results: list[RunResult] = []
    try:
        for peer in peers:
            try:
                expected = load_expected(peer / 'expected.yaml')
            except ExpectationError as error:
                results.append(RunResult(peer.name, '-', 'broken', [str(error)]))
                continue
            for run in RUNS:
                log(f'== {peer.name} · {run}')
                result = check_run(kit, peer, run, out, expected.get(run), args, expected['causes'])
                results.append(result)
                log(f'   {result.status} in {result.seconds:.1f} s · graded {percent(result.share)}'
                    + (f' · skips {result.skips}' if result.skips else ''))
        clients = [] if args.no_clients else run_clients(kit, out, args)
    finally:
        stop_all()

    log()
    log('Summary')
    failed = False
    for result in results:
        target = TARGETS.get(result.run)
        share = percent(result.share)
        if result.share and target:
            share += ' ✓' if result.share[0] >= target * result.share[1] else f' (target {target:.0%})'
        counts = ', '.join(f'{n} {o}' for o, n in sorted(result.counts.items()))
        told = f' · causes {result.causes[0]}/{result.causes[1]}' if result.causes else ''
        log(f'  {result.peer:<12} {result.run:<7} {result.status:<11} graded {share}{told}'
            + (f'  [{counts}]' if counts else ''))
        if result.status in ('differs', 'broken'):
            failed = True
            for line in result.lines:
                if not line.startswith(('unstable', 'known cause gap')):
                    log(f'      {line}')
    for client in clients:
        counts = ', '.join(f'{n} {o}' for o, n in sorted(client.counts.items()))
        log(f'  {client.name + " client":<20} {client.run:<20} {client.status:<11}' + (f'  [{counts}]' if counts else ''))
        if client.status != 'ok':
            failed = True
            for line in client.lines:
                log(f'      {line}')
    unsupported = [r for r in results if r.status == 'unsupported']
    if unsupported:
        log('  note: the kit does not accept --behaviors FILE yet; mapped runs were not compared')
    log(f'interop: {"DIFFERENCES" if failed else "as expected"} in {time.monotonic() - started:.0f} s'
        f' (reports in {out})')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
