"""One env's section of the report: what it is, its tools, its code, how it was validated, its
scenarios with their checks, and its trajectories as a chat."""

from __future__ import annotations

import html
import json
from typing import Any

from envscaler_core.inert_text import has_unsafe_in_line, inert
from envscaler_core.models import Scenario, Trajectory, ValidationRound
from envscaler_core.report.data import EnvView
from envscaler_core.report.highlight import highlight_python
from envscaler_core.shell import shell_words

MAX_JSON = 4000
MOCK_BADGE = ' <span class="badge warn">answered by the MOCK LLM</span>'


def esc(value: Any) -> str:
    return html.escape(str(value))


def _quoting_note(env_id: str) -> str:
    """Why the command looks odd, when it does: the id holds characters that are shown escaped."""
    if not has_unsafe_in_line(env_id):
        return ""
    return (" <span class=muted>(this env id holds control, line-separator, bidi or invisible characters: shown escaped, "
            "and quoted as <code>$'...'</code> so that the command pastes as shown in bash or zsh)</span>")


def clip(text: Any, limit: int) -> str:
    """`text` cut to about `limit` characters at a word boundary, with an ellipsis when cut (escape after)."""
    text = str(text)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut).rstrip(" ,;:.") + "…"


def js(value: Any, limit: int = MAX_JSON) -> str:
    """Pretty JSON, escaped and cut (the full data is in the store and the exports)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + f"\n... ({len(text) - limit} more characters)"
    return esc(text)


def code_block(source: str, css: str = "code") -> str:
    return f'<pre class="{css}">{highlight_python(source)}</pre>'


def verdict_badge(verdict: str | None) -> str:
    label = {"pass": "pass", "warning": "warning", "fail": "fail", True: "passed", False: "failed",
             None: "not scored"}.get(verdict, str(verdict))  # type: ignore[call-overload]
    css = {"pass": "ok", "passed": "ok", "warning": "warn", "fail": "bad", "failed": "bad"}.get(label, "muted")
    return f'<span class="badge {css}">{esc(label)}</span>'


def state_diff(diff: dict[str, Any]) -> str:
    changes = diff.get("changes") if isinstance(diff, dict) else None
    if not changes:
        return '<span class="muted">no change</span>'
    items = []
    for ch in changes[:12]:
        op, path = ch.get("op", "?"), ch.get("path", "")
        old = f' <span class="old">{esc(clip(json.dumps(ch["old"], default=str), 120))}</span>' if "old" in ch else ""
        new = f' → <span class="new">{esc(clip(json.dumps(ch["new"], default=str), 120))}</span>' if "new" in ch else ""
        items.append(f"<li><code>{esc(op)} {esc(path)}</code>{old}{new}</li>")
    more = f"<li class=muted>... {len(changes) - 12} more</li>" if len(changes) > 12 else ""
    return f'<ul class="diff">{"".join(items)}{more}</ul>'


def tools_table(view: EnvView) -> str:
    rows = []
    for tool in view.env.tools:
        fn = tool.function
        kind = view.env.tool_kinds.get(fn.name, "")
        rows.append(f"<tr><td><code>{esc(fn.name)}</code></td><td>{esc(kind)}</td><td>{esc(fn.description)}</td>"
                    f"<td><details><summary>schema</summary><pre class=json>{js(fn.parameters)}</pre></details></td></tr>")
    return ("<table class=grid><thead><tr><th>tool</th><th>kind</th><th>description</th><th>parameters</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def rounds_table(rounds: list[ValidationRound]) -> str:
    if not rounds:
        return '<p class="muted">No validation rounds stored.</p>'
    counts: dict[str, int] = {}
    for r in rounds:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    head = " · ".join(f"{verdict_badge(v)} {n}" for v, n in sorted(counts.items()))
    rows = []
    for r in rounds:
        observed = r.observation if r.error is None else {"error": r.error}
        rows.append(
            f"<tr><td>{r.mode[0]}{r.index}</td><td><code>{esc(r.tool)}</code>"
            f"<pre class=json>{js(r.args, 600)}</pre></td><td>{esc(r.case_type)}{'<br><small>' + esc(r.check) + '</small>' if r.check else ''}</td>"
            f"<td>{verdict_badge(r.verdict)}<div class=reason>{esc(clip(r.reason, 500))}</div></td>"
            f"<td><details><summary>result</summary><pre class=json>{js(observed, 1500)}</pre></details></td>"
            f"<td>{state_diff(r.state_diff)}</td></tr>")
    return (f"<p>{len(rounds)} rounds: {head}</p><div class=scroll><table class='grid rounds'><thead><tr><th>#</th>"
            "<th>call</th><th>case</th><th>verdict</th><th>observation</th><th>state diff</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def scenario_block(s: Scenario, runs: list[Trajectory]) -> str:
    verified = s.status == "verified"
    proof_note = ("verified: every check is a real boolean, <b>False</b> on the initial state and <b>True</b> after "
                  "the reference solution" if verified else f"rejected: {esc(s.rejection_reason or '?')}")
    checks = []
    for check in s.checks:
        got = [r for t in runs for r in t.check_results if r.item == check.item]
        proofs = " ".join(verdict_badge(r.passed) for r in got) or '<span class="muted">no rollout yet</span>'
        checks.append(f"<li><div>{esc(check.item)}</div><div class=proof>proof: "
                      f"{'reference ✓ ' if verified else ''}rollouts: {proofs}</div>"
                      f"<details><summary>check code</summary>{code_block(check.code)}</details></li>")
    solution = "".join(f"<li><code>{esc(c.tool)}</code> <span class=muted>{js(c.args, 300)}</span></li>"
                       for c in s.reference_solution)
    return (f'<div class="scenario" id="scen-{s.fingerprint[:12]}"><h4>Scenario <code>{s.fingerprint[:12]}</code> '
            f'{verdict_badge("pass" if verified else "fail")}</h4><p class=task>{esc(s.task)}</p>'
            f"<p class=small>{proof_note}</p><ol class=checks>{''.join(checks)}</ol>"
            f"<details><summary>reference solution ({len(s.reference_solution)} calls)</summary><ol>{solution}</ol></details>"
            f"<details><summary>initial state</summary><pre class=json>{js(s.initial_state)}</pre></details></div>")


def _tool_call(call: dict[str, Any]) -> str:
    fn = call.get("function", {}) if isinstance(call, dict) else {}
    args = fn.get("arguments", "")
    try:
        args = json.dumps(json.loads(args), ensure_ascii=False) if isinstance(args, str) else json.dumps(args)
    except ValueError:
        pass
    return f'<div class=call>→ <code>{esc(fn.get("name", "?"))}</code>(<span>{esc(clip(args, 800))}</span>)</div>'


def chat(t: Trajectory, mock: bool = False) -> str:
    """The trajectory as chat bubbles: the system prompt folded, tool results as compact JSON."""
    bubbles = []
    for m in t.messages:
        role = str(m.get("role", "?"))
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str) if content else ""
        if role == "system":
            bubbles.append(f"<details class='msg system'><summary>system prompt</summary><pre>{esc(text)}</pre></details>")
            continue
        if role == "tool":
            bubbles.append(f"<div class='msg tool'><div class=who>tool {esc(m.get('name', ''))}</div>"
                           f"<pre class=json>{esc(clip(text, 1500))}</pre></div>")
            continue
        calls = "".join(_tool_call(c) for c in m.get("tool_calls") or [])
        body = f"<div class=text>{esc(text)}</div>" if text else ""
        bubbles.append(f"<div class='msg {esc(role)}'><div class=who>{esc(role)}</div>{body}{calls}</div>")
    results = " ".join(f"{verdict_badge(r.passed)} {esc(clip(r.item, 80))}" for r in t.check_results)
    return (f'<div class="trajectory" id="traj-{t.fingerprint[:12]}"><h4>Trajectory <code>{t.fingerprint[:12]}</code> '
            f"· scenario <a href='#scen-{t.scenario_fp[:12]}'><code>{t.scenario_fp[:12]}</code></a> · {esc(t.agent_model)}"
            f"{MOCK_BADGE if mock else ''} · "
            f"{t.steps} steps · {esc(t.termination)} · reward <b>{t.reward:.2f}</b>{_collateral(t)}</h4>"
            f'<div class="chat">{"".join(bubbles)}</div><div class="checkres">{results}</div></div>')


def _collateral(t: Trajectory) -> str:
    """Changes outside the task's footprint (scenarios/footprint.py): passing checks do not show them."""
    if not t.collateral_changes:
        return ""
    return (f" · <b>{t.collateral_changes} collateral changes</b> "
            f"({esc(', '.join(t.collateral_paths))}{', ...' if t.collateral_changes > len(t.collateral_paths) else ''})")


def env_section(view: EnvView, run_id: str) -> str:
    env = view.env
    by_scenario: dict[str, list[Trajectory]] = {}
    for t in view.trajectories:
        by_scenario.setdefault(t.scenario_fp, []).append(t)
    rules = "".join(f"<li>{esc(r)}</li>" for r in env.rules)
    scen = "".join(scenario_block(s, by_scenario.get(s.fingerprint, [])) for s in view.scenarios) or \
        '<p class="muted">No scenarios.</p>'
    trajs = "".join(chat(t, view.mock_llm) for t in view.trajectories) or '<p class="muted">No trajectories.</p>'
    hidden = view.trajectories_total - len(view.trajectories)
    more = f'<p class="muted">{hidden} more trajectories in the exports.</p>' if hidden > 0 else ""
    return (f'<section class="env" id="env-{esc(inert(env.env_id))}"><h2>{esc(inert(env.env_id))} <small>{esc(env.class_name)} · '
            f"score {env.score:.2f} · {esc(env.validation_mode)}</small></h2>"
            f"<p>{esc(env.summary)}</p><details><summary>introduction and rules</summary><p>{esc(env.introduction)}</p>"
            f"<ul>{rules}</ul></details>"
            # `--run`: env ids are unique per run, not per store; without it another run's env of that id
            # could be served (red team 8, F4)
            f"<p class=small>Play with it: <code>{esc(shell_words('envscaler', 'serve-mcp', '--run', run_id, env.env_id))}</code>"
            f"{_quoting_note(env.env_id)}</p>"
            f"<h3>Tools ({len(env.tools)})</h3>{tools_table(view)}"
            f"<h3>Code</h3><details open><summary>{esc(env.class_name)} ({len(env.class_code.splitlines())} lines)</summary>"
            f"{code_block(env.class_code)}</details>"
            f"<h3>Validation</h3>{rounds_table(view.rounds)}"
            f"<h3>Scenarios ({len(view.scenarios)})</h3>{scen}"
            f"<h3>Trajectories ({view.trajectories_total})</h3>{trajs}{more}</section>")
