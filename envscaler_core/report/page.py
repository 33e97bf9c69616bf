"""The report page: run overview (funnel chart, per-step and per-LLM-stage figures, failure reasons,
sources), then one section per env. One file, inline CSS and a few lines of script, no network."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from envscaler_core.inert_text import inert
from envscaler_core.mine.source_report import report_lines
from envscaler_core.pipeline.progress_text import duration, tokens
from envscaler_core.report.charts import bar_row_svg, funnel_svg
from envscaler_core.pipeline.report import MOCK_NOTE
from envscaler_core.report.data import ReportData

JUDGED_ROWS = 500
from envscaler_core.report.env_section import clip, env_section, esc, rounds_table, verdict_badge

GENERATOR = "<meta name=generator content=envscaler-report>"
"""In every page `report` writes, so it can tell its own output (which it may replace) from any other file."""

CSS = """
:root{--fg:#1d2433;--muted:#6b7385;--bg:#f6f7fb;--card:#fff;--line:#e2e5ee;--acc:#3b5bdb;--ok:#2b8a3e;--bad:#c92a2a;--warn:#e67700}
*{box-sizing:border-box}body{margin:0;font:14px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#1d2433;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header .meta{color:#c5cbe0;font-size:13px}
.layout{display:flex;align-items:flex-start}nav{position:sticky;top:0;width:250px;max-height:100vh;overflow:auto;padding:14px;border-right:1px solid var(--line);background:var(--card);flex:none}
nav a{display:block;padding:3px 6px;border-radius:4px;color:var(--fg);text-decoration:none;font-size:13px}nav a:hover{background:#eef1fb}
nav input{width:100%;padding:5px;margin:6px 0;border:1px solid var(--line);border-radius:4px}
main{flex:1;min-width:0;padding:18px 24px}section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin-bottom:18px}
section.env:target{outline:3px solid var(--acc)}h2{margin:0 0 8px;font-size:18px}h2 small{color:var(--muted);font-weight:normal;font-size:13px}
h3{margin:18px 0 6px;font-size:15px;border-bottom:1px solid var(--line);padding-bottom:3px}h4{margin:10px 0 4px;font-size:14px}
table.grid{border-collapse:collapse;width:100%;font-size:13px}table.grid th,table.grid td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
table.grid th{background:#f1f3f9}td.num,th.num{text-align:right}.scroll{max-height:520px;overflow:auto}
pre{margin:4px 0;white-space:pre-wrap;word-break:break-word}pre.code{background:#fbfbfe;border:1px solid var(--line);border-radius:6px;padding:10px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:640px;overflow:auto}
pre.json{font:12px/1.4 ui-monospace,monospace;background:#f8f9fc;padding:4px 6px;border-radius:4px;max-height:260px;overflow:auto}
.code .k{color:#8839ef;font-weight:600}.code .k2{color:#d20f39}.code .s{color:#40a02b}.code .n{color:#fe640b}.code .c{color:#8c8fa1;font-style:italic}
.code .f{color:#1e66f5;font-weight:600}.code .b{color:#179299}.code .sf{color:#df8e1d}.code .o{color:#4c4f69}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;background:var(--muted)}
.badge.ok{background:var(--ok)}.badge.bad{background:var(--bad)}.badge.warn{background:var(--warn)}.muted{color:var(--muted)}small,.small{font-size:12px}
.reason{font-size:12px;color:#444;max-width:360px}ul.diff{margin:0;padding-left:16px;font-size:12px}.old{color:var(--bad)}.new{color:var(--ok)}
.chart .lbl{font:13px system-ui,sans-serif;fill:#1d2433}.chart .val{font:12px system-ui,sans-serif;fill:#444}.chart .bar0{fill:#3b5bdb}.chart .bar1{fill:#4c6ef5}.chart .bar2{fill:#748ffc}
.chart.small .lbl,.chart.small .val{font-size:11px}.row{display:flex;gap:24px;flex-wrap:wrap}
.scenario{border-left:3px solid var(--acc);padding:2px 12px;margin:10px 0}.task{font-size:14px;background:#f1f3f9;padding:6px 10px;border-radius:6px}
ol.checks li{margin-bottom:6px}.proof{font-size:12px;color:var(--muted)}
.chat{display:flex;flex-direction:column;gap:6px;max-width:900px}.msg{border-radius:10px;padding:6px 10px;max-width:85%;border:1px solid var(--line)}
.msg .who{font-size:11px;text-transform:uppercase;color:var(--muted);letter-spacing:.04em}.msg.user{align-self:flex-end;background:#e7f0ff}
.msg.assistant{align-self:flex-start;background:#fff}.msg.tool{align-self:flex-start;background:#f3f8f1;margin-left:24px}.msg.system{background:#fafafa;align-self:stretch;max-width:100%}
.call{font:12px ui-monospace,monospace;color:#5c3bdb}.trajectory{margin:12px 0;padding-top:6px;border-top:1px dashed var(--line)}.checkres{margin-top:6px;font-size:12px}
.kpi{display:inline-block;margin:0 22px 8px 0}.kpi b{display:block;font-size:20px}.note{background:#fff4e6;border-radius:6px;padding:6px 10px}
body.page main>section{display:none}body.page main>section.shown{display:block}
section.focus>*:not(h2):not(.shown){display:none}section.focus>.trajectory.shown{border-top:0}
"""

SCRIPT = """
// A link to an env (#env-...) or to one of its scenarios or trajectories shows that env as its own page
// (the target alone, for a scenario or a trajectory), starting at the top; #overview shows everything.
function route() {
  var id = decodeURIComponent(location.hash.slice(1)), el = id ? document.getElementById(id) : null;
  document.body.classList.remove('page');
  document.querySelectorAll('.shown, .focus').forEach(function (e) { e.classList.remove('shown', 'focus'); });
  var section = el ? el.closest('main > section') : null;
  if (!section || section.id === 'overview') return;
  document.body.classList.add('page');
  section.classList.add('shown');
  if (el !== section) { section.classList.add('focus'); el.classList.add('shown'); }
  window.scrollTo(0, 0);
}
window.addEventListener('hashchange', route);
window.addEventListener('load', function () { if (document.body.classList.contains('page')) window.scrollTo(0, 0); });
route();
document.getElementById('envfilter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('nav a.envlink').forEach(function (a) {
    a.style.display = a.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
"""


def _overview(data: ReportData) -> str:
    s, run = data.summary, data.run
    calls, cached = s.llm_calls
    kpis = "".join(f'<span class=kpi><b>{v}</b>{esc(k)}</span>' for k, v in (
        ("accepted envs", s.funnel.get("accepted_envs", 0)), ("verified scenarios", s.funnel.get("verified_scenarios", 0)),
        ("trajectories", s.funnel.get("trajectories", 0)), ("LLM calls", f"{calls} ({cached} cached)"),
        ("tokens", tokens(s.tokens)), ("cost" + (f" ({MOCK_NOTE})" if s.mock_llm else ""), f"${s.cost_usd:.4f}")))
    notes = "".join(f"<p class=note><span class='badge warn'>nothing produced</span> {esc(n)}</p>" for n in s.notes)
    steps = ""
    if run.progress and run.progress.steps:
        rows = "".join(
            f"<tr><td>{esc(p.name)}</td><td class=num>{p.done}{'/' + str(p.total) if p.total else ''}</td>"
            f"<td class=num>{p.failed}</td><td class=num>{p.llm_calls}</td><td class=num>{tokens(p.tokens)}</td>"
            f"<td class=num>${p.cost_usd:.4f}</td><td class=num>{duration(p.elapsed_s)}</td></tr>" for p in run.progress.steps)
        chart = bar_row_svg([(p.name, round(p.elapsed_s, 1)) for p in run.progress.steps], " s")
        caption = (" (the invocation that resumed the run; the funnel counts the whole run)"
                   if run.progress.resumed else "")
        steps = (f"<h3>Steps: items, tokens, cost, time{caption}</h3><div class=row><table class=grid style='max-width:640px'><thead><tr>"
                 "<th>step</th><th class=num>items</th><th class=num>failed</th><th class=num>LLM calls</th>"
                 f"<th class=num>tokens</th><th class=num>cost</th><th class=num>time</th></tr></thead><tbody>{rows}</tbody>"
                 f"</table><div>{chart}</div></div>")
    usage = "".join(
        f"<tr><td>{esc(stage)}</td><td class=num>{u.get('calls', 0)}</td><td class=num>{u.get('cached', 0)}</td>"
        f"<td class=num>{u.get('retries', 0)}</td><td class=num>{u.get('prompt_tokens', 0)}</td>"
        f"<td class=num>{u.get('cached_tokens', 0)}</td><td class=num>{u.get('completion_tokens', 0)}</td><td class=num>${float(u.get('cost_usd', 0)):.4f}</td></tr>"
        for stage, u in sorted(s.usage.items()))
    failures = "".join(f"<tr><td class=num>{n}</td><td>{esc(r)}</td></tr>" for r, n in s.top_failures) or \
        "<tr><td colspan=2 class=muted>none</td></tr>"
    sources = ""
    if s.sources_report and s.sources_report.files:
        sources = f"<h3>Sources</h3><pre>{esc(chr(10).join(report_lines(s.sources_report)))}</pre>"
    return (f"<section id=overview><h2>Overview</h2>{kpis}{notes}<h3>Funnel</h3>{funnel_svg(s.funnel)}{steps}"
            "<h3>LLM use per model stage</h3><table class=grid style='max-width:820px'><thead><tr><th>stage</th>"
            "<th class=num>calls</th><th class=num>cached</th><th class=num>retries</th><th class=num>prompt tok</th>"
            "<th class=num title='prompt tokens served from the provider&#39;s prefix cache'>prefix-cached</th>"
            f"<th class=num>completion tok</th><th class=num>cost</th></tr></thead><tbody>{usage}</tbody></table>"
            f"<h3>Top failure reasons</h3><table class=grid style='max-width:980px'><thead><tr><th class=num>n</th>"
            f"<th>reason</th></tr></thead><tbody>{failures}</tbody></table>{sources}</section>")


def _rejected(data: ReportData) -> str:
    if not data.rejected:
        return ""
    items = "".join(
        f"<details><summary><code>{c.fingerprint[:12]}</code> {esc(c.class_name)} {verdict_badge('fail')} "
        f"{esc(clip(c.failure_reason or '?', 200))}</summary>{rounds_table(data.rejected_rounds.get(c.fingerprint, []))}"
        "</details>" for c in data.rejected)
    return f"<section id=rejected><h2>Rejected candidates ({len(data.rejected)})</h2>{items}</section>"


def _judged(data: ReportData) -> str:
    """Every source task judged not stateful, with the judge's reason (capped for very large runs)."""
    if not data.not_stateful:
        return ""
    rows = "".join(f"<tr><td>{esc(clip(t.text, 300))}</td><td class=small>{esc(t.origin)}</td>"
                   f"<td class=reason>{esc(clip(t.judge_reason or '(no reason given)', 600))}</td></tr>"
                   for t in data.not_stateful[:JUDGED_ROWS])
    more = (f"<p class=muted>{len(data.not_stateful) - JUDGED_ROWS} more in the store (source_tasks with stateful = "
            "false).</p>") if len(data.not_stateful) > JUDGED_ROWS else ""
    return (f"<section id=judged><h2>Source tasks judged not stateful ({len(data.not_stateful)})</h2>"
            "<p class=small>Stage 1 keeps a task when it reads and changes the records of a domain system; the "
            "judge's reason for each task it dropped:</p><div class=scroll><table class=grid><thead><tr><th>task</th>"
            f"<th>from</th><th>judge's reason</th></tr></thead><tbody>{rows}</tbody></table></div>{more}</section>")


def render(data: ReportData, generated_at: Any) -> str:
    run, s = data.run, data.summary
    error = f"<div class=meta>error: {esc(run.error)}</div>" if run.error and run.status not in ("completed", "empty") \
        else ""
    links = "".join(f'<a class=envlink href="#env-{esc(inert(v.env.env_id))}">{esc(inert(v.env.env_id))} '
                    f'<span class=muted>{esc(v.env.class_name)}</span></a>' for v in data.envs)
    envs = "".join(env_section(v, run.run_id) for v in data.envs) or "<section><p class=muted>No accepted envs.</p></section>"
    created = run.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>{GENERATOR}<meta name=viewport content='width=device-width'>"
            f"<title>EnvScaler run {esc(run.run_id)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>EnvScaler run {esc(run.run_id)} · {esc(s.status)}</h1><div class=meta>started {created} · "
            f"{len(data.envs)} envs · generated {esc(generated_at)}</div>{error}</header>"
            f"<div class=layout><nav><a href='#overview'><b>Overview</b></a>"
            f"{'<a href=#rejected>Rejected candidates</a>' if data.rejected else ''}"
            f"{'<a href=#judged>Tasks judged not stateful</a>' if data.not_stateful else ''}"
            f"<div class=muted style='margin-top:8px'>Envs ({len(data.envs)})</div>"
            f"<input id=envfilter placeholder='filter envs' aria-label='filter envs'>{links}</nav>"
            f"<main>{_overview(data)}{envs}{_rejected(data)}{_judged(data)}</main></div><script>{SCRIPT}</script></body></html>")


__all__ = ["render"]
