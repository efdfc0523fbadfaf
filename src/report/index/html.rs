//! `index.html`: one self-contained page of a registry run (inline CSS and script, nothing fetched:
//! a Content-Security-Policy forbids it), so it opens offline from `file://` next to the agents'
//! folders. A header with the summary; a table of the agents, each linked to its own report, with
//! its top root cause, its flaky checks and what keeps it from conformance, sortable by name,
//! status, fails, warns and duration and filtered by status and text; and the requirements that fail
//! on the most agents. The filter and the order can be set from the address:
//! `index.html#status=non_conformant&q=core-send&sort=-fails`.
//!
//! Every string in the index comes from agents or their reports and is escaped.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::model::{AgentEntry, AgentStatus, Index, RequirementStat, valid_name};
use crate::report::html::esc;

/// The page.
pub fn render_html(index: &Index) -> String {
    let mut out = String::with_capacity(32 * 1024 + index.agents.len() * 1024);
    let s = &index.summary;
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{} {}\">\n\
         <title>{} agents · {} conformant · a2a-conform registry</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&index.tool),
        esc(&index.tool_version),
        s.agents,
        s.conformant,
    );
    let anchors = anchors(&index.agents);
    header(&mut out, index);
    agents(&mut out, index, &anchors);
    requirements(&mut out, index, &anchors);
    let _ = write!(
        out,
        "<footer><p>Generated {} by {} {} · index schema {}</p></footer>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        esc(&index.generated_at),
        esc(&index.tool),
        esc(&index.tool_version),
        esc(&index.schema_version)
    );
    out
}

/// How a status reads.
fn label(s: AgentStatus) -> &'static str {
    match s {
        AgentStatus::Conformant => "conformant",
        AgentStatus::NonConformant => "non-conformant",
        AgentStatus::Inconclusive => "inconclusive",
        AgentStatus::Error => "error",
    }
}

/// Sort rank of a status: the worst first.
fn rank(s: AgentStatus) -> u8 {
    match s {
        AgentStatus::Error => 0,
        AgentStatus::NonConformant => 1,
        AgentStatus::Inconclusive => 2,
        AgentStatus::Conformant => 3,
    }
}

/// One element id per agent (`a-` and the name with unsafe characters replaced; a suffix where two
/// names would give one id), in the order of `agents`.
fn anchors(agents: &[AgentEntry]) -> Vec<String> {
    let mut used = HashSet::new();
    agents
        .iter()
        .map(|a| {
            let slug: String = a
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                .collect();
            let base = format!("a-{slug}");
            let mut id = base.clone();
            let mut n = 1;
            while !used.insert(id.clone()) {
                n += 1;
                id = format!("{base}-{n}");
            }
            id
        })
        .collect()
}

/// Percent-encodes everything but unreserved characters (RFC 3986), for a fragment value or one
/// path segment.
fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The `href` of a report link: its segments percent-encoded, so that nothing in it is read as a
/// scheme, a query or a fragment; none when a segment is no folder or file name.
fn href(link: &str) -> Option<String> {
    let segments: Vec<&str> = link.split('/').collect();
    segments.iter().all(|s| valid_name(s)).then(|| segments.iter().map(|s| pct(s)).collect::<Vec<_>>().join("/"))
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn header(out: &mut String, index: &Index) {
    let s = &index.summary;
    out.push_str("<header>\n<h1>A2A conformance of a registry</h1>\n");
    let shard = index.shard.map(|sh| format!(" · shard {} of {}", sh.index, sh.count)).unwrap_or_default();
    let _ = writeln!(
        out,
        "<p class=\"sub\" id=\"summary\">{} agent(s){shard} · {} requirement(s) fail or warn on at least one agent</p>",
        s.agents,
        index.requirements.len()
    );
    out.push_str("<ul class=\"totals\">");
    let _ = write!(out, "<li class=\"s-all\"><b>{}</b> agents</li>", s.agents);
    for (status, n) in [
        (AgentStatus::Conformant, s.conformant),
        (AgentStatus::NonConformant, s.non_conformant),
        (AgentStatus::Inconclusive, s.inconclusive),
        (AgentStatus::Error, s.errored),
    ] {
        let _ = write!(
            out,
            "<li class=\"s-{0}\"><a href=\"#status={0}\"><b>{n}</b> {1}</a></li>",
            status.as_str(),
            label(status)
        );
    }
    let _ = writeln!(out, "<li class=\"s-flaky\"><b>{}</b> flaky</li></ul>", s.flaky_agents);
    if s.agents > 0 {
        out.push_str("<div class=\"bar\" role=\"img\" aria-label=\"agents by status\">");
        for (status, n) in [
            (AgentStatus::Conformant, s.conformant),
            (AgentStatus::NonConformant, s.non_conformant),
            (AgentStatus::Inconclusive, s.inconclusive),
            (AgentStatus::Error, s.errored),
        ] {
            if n > 0 {
                let pct = n as f64 * 100.0 / s.agents as f64;
                let _ = write!(
                    out,
                    "<span class=\"seg s-{}\" style=\"width:{pct:.3}%\" title=\"{n} {}\"></span>",
                    status.as_str(),
                    label(status)
                );
            }
        }
        out.push_str("</div>\n");
    }
    out.push_str("<dl class=\"run\">");
    for (k, v) in [
        ("Tool", format!("{} {}", index.tool, index.tool_version)),
        ("Generated", index.generated_at.clone()),
        ("Run time, all agents", seconds(s.duration_ms)),
    ] {
        let _ = write!(out, "<div><dt>{k}</dt><dd>{}</dd></div>", esc(&v));
    }
    out.push_str("</dl>\n</header>\n");
}

fn agents(out: &mut String, index: &Index, anchors: &[String]) {
    let total = index.agents.len();
    out.push_str(
        "<section id=\"agents\">\n<h2>Agents</h2>\n<div class=\"filters\">\
         <input type=\"search\" id=\"q\" placeholder=\"Filter by name, URL, label or check id\" aria-label=\"Filter\">\
         <select id=\"status\" aria-label=\"Status\"><option value=\"\">every status</option>",
    );
    for status in AgentStatus::ALL {
        let n = index.agents.iter().filter(|a| a.status == status).count();
        let _ = write!(out, "<option value=\"{}\">{} ({n})</option>", status.as_str(), label(status));
    }
    let _ = write!(
        out,
        "</select> <span id=\"shown\" aria-live=\"polite\">{total} of {total} agents shown</span></div>\n\
         <table id=\"agents-table\"><thead><tr>\
         <th data-sort=\"name\" aria-sort=\"ascending\"><button type=\"button\">Agent</button></th>\
         <th data-sort=\"status\" aria-sort=\"none\"><button type=\"button\">Status</button></th>\
         <th data-sort=\"fails\" aria-sort=\"none\" class=\"num\"><button type=\"button\">Fails</button></th>\
         <th data-sort=\"warns\" aria-sort=\"none\" class=\"num\"><button type=\"button\">Warns</button></th>\
         <th data-sort=\"duration\" aria-sort=\"none\" class=\"num\"><button type=\"button\">Duration</button></th>\
         <th>Top cause</th></tr></thead>\n<tbody>\n"
    );
    for (a, anchor) in index.agents.iter().zip(anchors) {
        agent_row(out, a, anchor);
    }
    out.push_str("</tbody></table>\n");
    if index.agents.is_empty() {
        out.push_str("<p class=\"none\">No agents.</p>\n");
    }
    out.push_str("</section>\n");
}

fn agent_row(out: &mut String, a: &AgentEntry, anchor: &str) {
    let mut text: Vec<&str> = vec![&a.name, &a.url];
    text.extend(a.labels.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]));
    text.extend(a.failing.iter().map(String::as_str));
    text.extend(a.causes.iter().map(|c| c.root.as_str()));
    text.extend(a.flaky.iter().map(|f| f.id.as_str()));
    let search = text.join(" ").to_lowercase();
    let name = match a.report.as_deref().and_then(href) {
        Some(h) => format!("<a class=\"report\" href=\"{}\">{}</a>", esc(&h), esc(&a.name)),
        None => esc(&a.name),
    };
    let _ = write!(
        out,
        "<tr id=\"{anchor}\" data-name=\"{}\" data-status=\"{s}\" data-rank=\"{}\" data-fails=\"{}\" data-warns=\"{}\" \
         data-duration=\"{}\" data-text=\"{}\">\
         <td class=\"agent\">{name}<div class=\"url\">{}</div>",
        esc(&a.name),
        rank(a.status),
        a.fails(),
        a.warns(),
        a.duration_ms,
        esc(&search),
        esc(&a.url),
        s = a.status.as_str(),
    );
    if !a.labels.is_empty() {
        out.push_str("<div class=\"labels\">");
        for (k, v) in &a.labels {
            let _ = write!(out, "<span class=\"label\">{}={}</span> ", esc(k), esc(v));
        }
        out.push_str("</div>");
    }
    let _ = write!(
        out,
        "</td><td><span class=\"tag s-{}\">{}</span> <small>exit {}</small></td>\
         <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"cause\">",
        a.status.as_str(),
        label(a.status),
        a.exit_code,
        a.fails(),
        a.warns(),
        seconds(a.duration_ms)
    );
    if let Some(e) = &a.error {
        let _ = write!(out, "<p class=\"error\">{}</p>", esc(e));
    }
    if let Some((top, rest)) = a.causes.split_first() {
        cause_line(out, top);
        if !rest.is_empty() {
            let _ = write!(out, "<details class=\"more\"><summary>{} more cause(s)</summary>", rest.len());
            for c in rest {
                cause_line(out, c);
            }
            out.push_str("</details>");
        }
    }
    if !a.flaky.is_empty() {
        let _ = write!(out, "<div class=\"flaky\"><span class=\"tag s-flaky\">flaky</span> over {} runs: ", a.runs);
        let items: Vec<String> = a
            .flaky
            .iter()
            .map(|f| {
                let seen: Vec<String> = f.outcomes.iter().map(|(o, n)| format!("{} ×{n}", esc(o))).collect();
                format!("<code>{}</code> ({})", esc(&f.id), seen.join(", "))
            })
            .collect();
        out.push_str(&items.join("; "));
        out.push_str("</div>");
    }
    if !a.failing_checks.is_empty() {
        let _ = write!(
            out,
            "<details class=\"failing\"><summary>{} failing or warning check(s)</summary><ul>",
            a.failing_checks.len()
        );
        for c in &a.failing_checks {
            let _ = write!(
                out,
                "<li><span class=\"o-{o}\">{o}</span> <a href=\"#q={}\"><code>{}</code></a> {}</li>",
                pct(&c.id.to_lowercase()),
                esc(&c.id),
                esc(&c.title),
                o = c.outcome.as_str()
            );
        }
        out.push_str("</ul></details>");
    }
    out.push_str("</td></tr>\n");
}

fn cause_line(out: &mut String, c: &super::model::CauseEntry) {
    let _ = write!(
        out,
        "<p class=\"headline\"><span class=\"lvl\">{}</span> {} <small>(root <code>{}</code>, decides {})</small></p>",
        c.level.as_str().to_uppercase(),
        esc(&c.headline),
        esc(&c.root),
        c.decides
    );
}

fn requirements(out: &mut String, index: &Index, anchors: &[String]) {
    let _ = write!(
        out,
        "<section id=\"requirements\">\n<h2>Which requirements fail most <small>{} scored check(s) fail or warn on at least one agent</small></h2>\n",
        index.requirements.len()
    );
    if index.requirements.is_empty() {
        out.push_str("<p class=\"none\">No scored check failed or warned on any agent.</p>\n</section>\n");
        return;
    }
    out.push_str(
        "<table id=\"requirements-table\"><thead><tr><th>Check</th><th>Level</th><th>Title</th>\
         <th class=\"num\">Agents</th><th>Which</th></tr></thead>\n<tbody>\n",
    );
    for r in &index.requirements {
        requirement_row(out, index, anchors, r);
    }
    out.push_str("</tbody></table>\n</section>\n");
}

fn requirement_row(out: &mut String, index: &Index, anchors: &[String], r: &RequirementStat) {
    let split = match (r.fail, r.warn) {
        (_, 0) => format!("{} fail", r.fail),
        (0, _) => format!("{} warn", r.warn),
        _ => format!("{} fail, {} warn", r.fail, r.warn),
    };
    let _ = write!(
        out,
        "<tr data-id=\"{id}\"><td><a href=\"#q={}\" title=\"Show these agents\"><code>{id}</code></a></td><td>{}</td><td>{}</td>\
         <td class=\"num\"><b>{}</b> <small>({split})</small></td><td><details><summary>{} agent(s)</summary><ul>",
        pct(&r.id.to_lowercase()),
        r.level.as_str().to_uppercase(),
        esc(&r.title),
        r.agent_count,
        r.agents.len(),
        id = esc(&r.id),
    );
    for name in &r.agents {
        match index.agents.iter().position(|a| &a.name == name) {
            Some(i) => {
                let _ = write!(out, "<li><a href=\"#{}\">{}</a></li>", anchors[i], esc(name));
            }
            None => {
                let _ = write!(out, "<li>{}</li>", esc(name));
            }
        }
    }
    out.push_str("</ul></details></td></tr>\n");
}

const CSS: &str = r#"
:root{--conformant:#1a7f37;--non_conformant:#cf222e;--inconclusive:#8250df;--error:#57606a;--flaky:#bf8700;--warn:#bf8700;--info:#0969da;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1280px;padding:1.5rem;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.6rem;margin:0}h2{font-size:1.25rem;border-bottom:1px solid var(--line);padding-bottom:.3rem;margin-top:2rem}h2 small{font-weight:normal;color:var(--muted);font-size:.85rem}
code{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}a{color:var(--info)}
.sub{color:var(--muted);margin:.3rem 0}
.s-conformant{--c:var(--conformant)}.s-non_conformant{--c:var(--non_conformant)}.s-inconclusive{--c:var(--inconclusive)}.s-error{--c:var(--error)}.s-flaky{--c:var(--flaky)}.s-all{--c:var(--fg)}
.totals{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0;margin:.6rem 0}.totals li{border:1px solid var(--line);border-left:4px solid var(--c);border-radius:6px;padding:.2rem .7rem}
.totals a{color:inherit;text-decoration:none}.totals b{font-size:1.1rem}
.bar{display:flex;height:1rem;border-radius:4px;overflow:hidden;background:var(--soft);border:1px solid var(--line);max-width:40rem}.seg{display:block;height:100%;background:var(--c)}
.run{display:flex;flex-wrap:wrap;gap:.3rem 1.5rem;margin:.6rem 0}.run div{display:flex;gap:.4rem}.run dt{color:var(--muted)}.run dd{margin:0}
.tag{display:inline-block;border-radius:4px;padding:0 .4rem;font-size:.75rem;font-weight:600;color:#fff;background:var(--c,var(--error));white-space:nowrap}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}.filters input{flex:1;min-width:16rem;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px}
.filters select{padding:.3rem;border:1px solid var(--line);border-radius:6px}#shown{color:var(--muted)}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line)}
th{background:var(--soft);position:sticky;top:0}th button{font:inherit;font-weight:600;border:0;background:none;padding:0;cursor:pointer;color:inherit}
th[aria-sort=ascending] button::after{content:" \25B2"}th[aria-sort=descending] button::after{content:" \25BC"}
.num{text-align:right;white-space:nowrap}td.agent{word-break:break-all;min-width:12rem}.agent .report{font-weight:600}.url{color:var(--muted);font-size:.85rem}
.label{display:inline-block;background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:0 .3rem;font-size:.75rem;margin-top:.2rem}
.cause p{margin:0 0 .2rem}.headline .lvl{color:var(--muted);font-size:.75rem;font-weight:600}.headline small{color:var(--muted)}
.error{color:var(--non_conformant)}.flaky{margin:.2rem 0;font-size:.9rem}.more summary,.failing summary,#requirements summary{cursor:pointer;color:var(--muted)}
.failing ul,#requirements ul{margin:.2rem 0;padding-left:1.2rem}.o-fail{color:var(--non_conformant);font-weight:600}.o-warn{color:var(--warn);font-weight:600}
tr[hidden]{display:none}.none{color:var(--muted)}footer{margin-top:2rem;color:var(--muted);font-size:.85rem}
"#;

const SCRIPT: &str = r#"
(function () {
  var q = document.getElementById('q'), status = document.getElementById('status'),
      shown = document.getElementById('shown'), tbody = document.querySelector('#agents-table tbody');
  var rows = Array.prototype.slice.call(tbody.querySelectorAll('tr[data-name]'));
  var heads = Array.prototype.slice.call(document.querySelectorAll('#agents-table th[data-sort]'));
  var numeric = { status: 'rank', fails: 'fails', warns: 'warns', duration: 'duration' };
  var sort = { key: 'name', desc: false };
  function value(row, key) {
    return numeric[key] ? Number(row.getAttribute('data-' + numeric[key])) : row.getAttribute('data-name').toLowerCase();
  }
  function cmp(x, y) { return x < y ? -1 : x > y ? 1 : 0; }
  function order() {
    rows.slice().sort(function (a, b) {
      var c = cmp(value(a, sort.key), value(b, sort.key));
      if (sort.desc) c = -c;
      return c || cmp(a.getAttribute('data-name'), b.getAttribute('data-name'));
    }).forEach(function (row) { tbody.appendChild(row); });
    heads.forEach(function (th) {
      var on = th.getAttribute('data-sort') === sort.key;
      th.setAttribute('aria-sort', on ? (sort.desc ? 'descending' : 'ascending') : 'none');
    });
  }
  function apply() {
    var text = q.value.trim().toLowerCase(), s = status.value, n = 0;
    rows.forEach(function (row) {
      var ok = (!s || row.getAttribute('data-status') === s) &&
               (!text || row.getAttribute('data-text').indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) n++;
    });
    order();
    shown.textContent = n + ' of ' + rows.length + ' agents shown';
    var by = sort.key === 'name' && !sort.desc ? '' : 'sort=' + (sort.desc ? '-' : '') + sort.key;
    return [s && 'status=' + s, text && 'q=' + encodeURIComponent(text), by].filter(Boolean).join('&');
  }
  function remember() {
    var hash = apply();
    try { history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search); } catch (e) {}
  }
  // The filter in the address (`#status=...&q=...&sort=-fails`), what it leaves out at its default;
  // false, and nothing changed, when the address names no filter (an anchor such as `#a-name`).
  function read() {
    var got = {};
    location.hash.slice(1).split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i < 0) return;
      try { got[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) {}
    });
    if (!('q' in got) && !('status' in got) && !('sort' in got)) return false;
    q.value = got.q || '';
    status.value = got.status || '';
    var v = got.sort || 'name', desc = v.charAt(0) === '-', key = desc ? v.slice(1) : v;
    sort = key === 'name' || numeric[key] ? { key: key, desc: desc } : { key: 'name', desc: false };
    return true;
  }
  // An anchor to an agent the filter hides: clear the filter, then show it.
  function reveal() {
    var id = location.hash.slice(1), row = id && document.getElementById(id);
    if (!row || !row.hidden) return;
    q.value = ''; status.value = '';
    apply();
    row.scrollIntoView();
  }
  heads.forEach(function (th) {
    th.querySelector('button').addEventListener('click', function () {
      var key = th.getAttribute('data-sort');
      if (sort.key === key) sort.desc = !sort.desc;
      else sort = { key: key, desc: key !== 'name' && key !== 'status' };
      remember();
    });
  });
  [q, status].forEach(function (el) {
    el.addEventListener('input', remember);
    el.addEventListener('change', remember);
  });
  // A link such as a requirement's `#q=core-send-001` filters, and brings the agents into view.
  window.addEventListener('hashchange', function () {
    if (!read()) return reveal();
    apply();
    document.getElementById('agents').scrollIntoView();
  });
  read();
  apply();
  reveal();
  document.documentElement.setAttribute('data-ready', 'true');
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::index::entry::entry_failed;
    use crate::report::index::model::{CauseEntry, FailingCheck, FlakyCheck};
    use crate::report::model::{Level, Outcome};

    const HOSTILE: &str = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\"'&";

    fn hostile_index() -> Index {
        let mut e = entry_failed(HOSTILE, HOSTILE, HOSTILE.into(), 1);
        e.status = AgentStatus::NonConformant;
        e.report = Some("javascript:alert(1)".into());
        e.labels.insert(HOSTILE.into(), HOSTILE.into());
        e.causes = vec![CauseEntry {
            id: "C-0".into(),
            headline: HOSTILE.into(),
            level: Level::Must,
            root: HOSTILE.into(),
            decides: 1,
        }];
        e.failing_checks = vec![FailingCheck {
            id: HOSTILE.into(),
            title: HOSTILE.into(),
            level: Level::Must,
            outcome: Outcome::Fail,
        }];
        e.failing = vec![HOSTILE.into()];
        e.flaky = vec![FlakyCheck { id: HOSTILE.into(), outcomes: [(HOSTILE.into(), 1)].into() }];
        Index::build(vec![e], None)
    }

    #[test]
    fn every_string_from_an_agent_is_escaped() {
        let page = render_html(&hostile_index());
        assert_eq!(page.matches("<script>").count(), 1, "only the page's own script");
        assert_eq!(page.matches("</script>").count(), 1);
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("href=\"javascript:"), "{page}");
        assert!(page.contains("&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;"));
    }

    #[test]
    fn report_links_stay_relative_paths() {
        assert_eq!(href("alpha/report.html").as_deref(), Some("alpha/report.html"));
        assert_eq!(href("team a#1/report.json").as_deref(), Some("team%20a%231/report.json"));
        assert_eq!(href("javascript:alert(1)").as_deref(), Some("javascript%3Aalert%281%29"));
        assert_eq!(href("../x/report.html"), None);
        assert_eq!(href("/etc/passwd"), None);
    }

    #[test]
    fn anchors_are_unique_ids() {
        let a = |n: &str| entry_failed(n, "u", String::new(), 0);
        assert_eq!(anchors(&[a("a b"), a("a_b"), a("a/b")]), ["a-a_b", "a-a_b-2", "a-a_b-3"]);
    }

    #[test]
    fn the_page_has_the_filters_the_sort_and_the_requirements() {
        let page = render_html(&hostile_index());
        for needle in [
            "id=\"q\"",
            "id=\"status\"",
            "<option value=\"non_conformant\">non-conformant (1)</option>",
            "data-sort=\"fails\"",
            "data-sort=\"duration\"",
            "id=\"requirements-table\"",
            "1 of 1 agents shown",
            "data-status=\"non_conformant\"",
            "Content-Security-Policy",
        ] {
            assert!(page.contains(needle), "{needle} missing");
        }
    }
}
