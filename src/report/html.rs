//! One self-contained HTML page of a [`Report`]: inline CSS and script, nothing fetched (a
//! Content-Security-Policy forbids it), so it opens offline and can be attached to a CI run.
//!
//! The page shows the verdict, what to fix first, a bar per profile, the baseline, the findings
//! grouped by root cause (each with what the agent did, then the sentence that decides it as a
//! `<blockquote>` with a `<cite>` of its place, the spec's other words and the kit's reading of them
//! under its own label folded in a `<details>`, then the expected-vs-actual diff and the redacted
//! evidence with its curl reproducer) and a table of every check that filters by text, outcome and
//! profile. The filter can be set from the address: `report.html#outcome=fail&profile=core&q=send`.

use std::fmt::Write as _;

use super::causes::{self, Cause};
use super::fix_first;
use super::graded::Peer;
use super::json::{Counts, Report, ReportResult};
use super::model::{CheckResult, EntryStatus, Evidence, Outcome, Quote, Verdict};
use super::textdiff::{self, Side};

/// Diff lines shown per finding before the rest is elided.
const MAX_DIFF_LINES: usize = 200;

/// The page.
pub fn to_html(report: &Report) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let verdict = verdict_label(report.verdict.status);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
         script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{} {}\">\n<title>{} · {} · a2a-conform</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&report.tool.name),
        esc(&report.tool.version),
        esc(verdict),
        esc(&report.target.url)
    );
    header(&mut out, report);
    fix_first(&mut out, report);
    profiles(&mut out, report);
    if let Some(b) = &report.baseline {
        baseline(&mut out, b);
    }
    findings(&mut out, report);
    table(&mut out, report);
    footer(&mut out, report);
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An element id for check `id` (ids of external suites may hold any character).
fn anchor(prefix: &str, id: &str) -> String {
    let slug: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("{prefix}-{slug}")
}

fn verdict_label(v: Verdict) -> &'static str {
    match v {
        Verdict::Conformant => "Conformant",
        Verdict::NonConformant => "Non-conformant",
        Verdict::UsageError => "Usage error",
        Verdict::Inconclusive => "Inconclusive",
    }
}

fn header(out: &mut String, r: &Report) {
    let v = &r.verdict;
    let _ = write!(
        out,
        "<header>\n<h1>A2A conformance report</h1>\n<p class=\"target\">{}</p>\n\
         <p class=\"verdict v-{}\" id=\"verdict\"><strong>{}</strong> <span>exit {}</span></p>\n{}<ul class=\"reasons\">",
        esc(&r.target.url),
        v.status.as_str(),
        verdict_label(v.status),
        v.exit_code,
        graded_line(r)
    );
    for reason in &v.reasons {
        let _ = write!(out, "<li>{}</li>", esc(reason));
    }
    out.push_str("</ul>\n<dl class=\"run\">");
    let profiles = if r.run.profiles.is_empty() { "all".to_owned() } else { r.run.profiles.join(", ") };
    for (k, val) in [
        ("A2A", r.spec_version.clone()),
        ("Tool", format!("{} {}", r.tool.name, r.tool.version)),
        ("Run", r.run.id.clone()),
        ("Started", r.run.started_at.clone()),
        ("Duration", format!("{:.1} s", r.summary.duration_ms as f64 / 1000.0)),
        ("Profiles", profiles),
        ("Strict", if r.run.strict { "on" } else { "off" }.to_owned()),
    ] {
        let _ = write!(out, "<div><dt>{k}</dt><dd>{}</dd></div>", esc(&val));
    }
    out.push_str("</dl>\n");
    let s = &r.summary;
    out.push_str("<ul class=\"totals\">");
    for (class, label, n) in [
        ("all", "checks", s.total),
        ("pass", "pass", s.passed),
        ("fail", "fail", s.failed),
        ("warn", "warn", s.warned),
        ("skip", "skip", s.skipped),
        ("error", "error", s.errors),
        ("info", "info", s.info),
    ] {
        let _ = write!(out, "<li class=\"o-{class}\"><b>{n}</b> {label}</li>");
    }
    out.push_str("</ul>\n");
    if !r.target.notes.is_empty() {
        out.push_str("<ul class=\"notes\">");
        for n in &r.target.notes {
            let _ = write!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</header>\n");
}

/// What the verdict rests on, under it: "Conformant over 136 of 206 MUST checks; 70 not graded: ...".
fn graded_line(r: &Report) -> String {
    let over = r.verdict.graded.statement(r.run.strict, Peer::of_mode(&r.run.mode));
    if over.is_empty() {
        return String::new();
    }
    format!("<p class=\"graded\" id=\"graded\">{} {}</p>\n", verdict_label(r.verdict.status), esc(&over))
}

fn profiles(out: &mut String, r: &Report) {
    out.push_str("<section id=\"profiles\">\n<h2>Profiles</h2>\n");
    for profile in r.profiles_in_order() {
        let c = r.summary.by_profile.get(profile).copied().unwrap_or_default();
        let unscored = r.checks().filter(|x| x.profile == profile).all(|x| !x.scored);
        let _ = writeln!(
            out,
            "<div class=\"profile\" data-profile=\"{p}\"><span class=\"name\">{p}{}</span>{}<span class=\"counts\">{}</span></div>",
            if unscored { " <small>(not scored)</small>" } else { "" },
            bar(&c),
            esc(&counts_text(&c)),
            p = esc(profile),
        );
    }
    out.push_str("</section>\n");
}

fn segments(c: &Counts) -> [(&'static str, u64); 6] {
    [
        ("pass", c.passed),
        ("fail", c.failed),
        ("warn", c.warned),
        ("error", c.errors),
        ("info", c.info),
        ("skip", c.skipped),
    ]
}

/// A stacked bar of the outcomes, widths in percent of the profile's checks.
fn bar(c: &Counts) -> String {
    let mut s = String::from("<span class=\"bar\" role=\"img\" aria-label=\"");
    s.push_str(&esc(&counts_text(c)));
    s.push_str("\">");
    if c.total > 0 {
        for (class, n) in segments(c) {
            if n > 0 {
                let pct = n as f64 * 100.0 / c.total as f64;
                let _ =
                    write!(s, "<span class=\"seg o-{class}\" style=\"width:{pct:.3}%\" title=\"{n} {class}\"></span>");
            }
        }
    }
    s.push_str("</span>");
    s
}

fn counts_text(c: &Counts) -> String {
    let parts: Vec<String> =
        segments(c).iter().filter(|(_, n)| *n > 0).map(|(class, n)| format!("{n} {class}")).collect();
    let noun = if c.total == 1 { "check" } else { "checks" };
    format!("{} {noun}: {}", c.total, if parts.is_empty() { "none".to_owned() } else { parts.join(", ") })
}

fn baseline(out: &mut String, b: &super::model::BaselineReport) {
    let _ = write!(
        out,
        "<section id=\"baseline\">\n<h2>Baseline</h2>\n<p><code>{}</code> · judged on {} · sha256 <code>{}</code></p>\n\
         <table><thead><tr><th>Check</th><th>Status</th><th>Reason</th><th>Expires</th></tr></thead><tbody>\n",
        esc(&b.source),
        esc(&b.evaluated_on),
        esc(&b.sha256)
    );
    for e in &b.entries {
        let link = if e.status == EntryStatus::Unknown {
            esc(&e.id)
        } else {
            format!("<a href=\"#{}\">{}</a>", anchor("c", &e.id), esc(&e.id))
        };
        let _ = writeln!(
            out,
            "<tr class=\"b-{s}\"><td>{link}</td><td><span class=\"tag b-{s}\">{s}</span></td><td>{}</td><td>{}</td></tr>",
            esc(&e.reason),
            esc(e.expires.as_deref().unwrap_or("—")),
            s = e.status.as_str(),
        );
    }
    out.push_str("</tbody></table>\n</section>\n");
}

/// The diagnosis of a failing neutral SendMessage, before the findings it explains.
fn diagnosis(out: &mut String, r: &Report) {
    let Some(d) = causes::diagnosis(r.checks()) else { return };
    let Some(f) = &d.failure else { return };
    let _ = writeln!(
        out,
        "<section id=\"diagnosis\">\n<h2>Diagnosis <small><a href=\"#{}\">{}</a></small></h2>\n<p class=\"msg\">{}</p>",
        anchor("c", &d.id),
        esc(&d.id),
        esc(&f.message)
    );
    if let Some(lines) = &f.actual {
        let _ = writeln!(out, "<pre class=\"value\">{}</pre>", esc(lines));
    }
    out.push_str("</section>\n");
}

fn findings(out: &mut String, r: &Report) {
    diagnosis(out, r);
    let _ = write!(
        out,
        "<section id=\"findings\">\n<h2>Findings <small>{}</small></h2>\n",
        esc(&r.summary.causes.statement())
    );
    if r.causes.is_empty() {
        out.push_str("<p class=\"none\">No check failed, warned or ended in error.</p>\n");
    }
    for c in &r.causes {
        cause(out, r, c);
    }
    out.push_str("</section>\n");
}

/// What to fix first, under the verdict: each cause a line linking to its story, with the
/// sentence that decides it.
fn fix_first(out: &mut String, r: &Report) {
    let (items, more) = fix_first::of(r);
    if items.is_empty() {
        return;
    }
    out.push_str("<section id=\"fix-first\">\n<h2>Fix first</h2>\n<ol class=\"fix\">\n");
    for item in &items {
        let c = item.cause;
        let _ = write!(
            out,
            "<li><span class=\"lvl l-{}\">{}</span> <a href=\"#{}\">{}</a>",
            c.level.as_str(),
            c.level.as_str().to_uppercase(),
            anchor("cause", &c.id),
            esc(&c.headline)
        );
        if let Some(e) = &c.evidence {
            let _ = write!(out, "<div class=\"evidence\">{}</div>", esc(e));
        }
        if let Some(q) = &item.sentence {
            let _ = write!(out, "<blockquote>{} <cite>{}</cite></blockquote>", esc(&q.text), esc(&q.place()));
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n");
    if more > 0 {
        let _ = writeln!(out, "<p class=\"none\">… and {more} more under <a href=\"#findings\">Findings</a>.</p>");
    }
    out.push_str("</section>\n");
}

/// One root cause: its headline, the root's finding in full, and the others it explains folded
/// under it (each whole, so that a link to any finding lands on it).
fn cause(out: &mut String, r: &Report, c: &Cause) {
    let _ = writeln!(
        out,
        "<section class=\"cause\" id=\"{}\">\n<h3 class=\"headline\"><span class=\"lvl\">{}</span> {}</h3>",
        anchor("cause", &c.id),
        c.level.as_str().to_uppercase(),
        esc(&c.headline)
    );
    if let Some(e) = &c.evidence {
        let _ = writeln!(out, "<p class=\"evidence\">{}</p>", esc(e));
    }
    let members: Vec<&CheckResult> = c.findings.iter().filter_map(|id| r.result(id)).map(|x| &x.result).collect();
    let waiting: Vec<&CheckResult> = c.waiting.iter().filter_map(|id| r.result(id)).map(|x| &x.result).collect();
    if let Some((root, same)) = members.split_first() {
        finding(out, r, root, same, &waiting);
        if !same.is_empty() {
            let _ = writeln!(
                out,
                "<details class=\"members\"><summary>The {} other finding(s) of this cause</summary>",
                same.len()
            );
            for x in same {
                finding(out, r, x, &[], &[]);
            }
            out.push_str("</details>\n");
        }
    }
    out.push_str("</section>\n");
}

fn status_of<'a>(r: &'a Report, id: &str) -> Option<&'a ReportResult> {
    r.results.iter().find(|x| x.result.id == id)
}

fn link_list(rs: &[&CheckResult]) -> String {
    rs.iter().map(|d| format!("<a href=\"#{}\">{}</a>", anchor("c", &d.id), esc(&d.id))).collect::<Vec<_>>().join(", ")
}

/// A finding in full; the root of a cause also names the checks that `same` and `waiting` hold.
fn finding(out: &mut String, report: &Report, r: &CheckResult, same: &[&CheckResult], waiting: &[&CheckResult]) {
    let o = r.outcome.as_str();
    let _ = write!(
        out,
        "<article class=\"finding o-{o}\" id=\"{}\">\n<h3><span class=\"tag o-{o}\">{}</span> \
         <a class=\"id\" href=\"#{}\">{}</a> <span class=\"sec\">{}{}</span>",
        anchor("f", &r.id),
        o.to_uppercase(),
        anchor("c", &r.id),
        esc(&r.id),
        if r.spec.section.is_empty() { String::new() } else { format!("§{} · ", esc(&r.spec.section)) },
        r.level.as_str().to_uppercase()
    );
    if !r.scored {
        out.push_str(" <small>(not scored)</small>");
    }
    if let Some(b) = status_of(report, &r.id).and_then(|x| x.baseline_status) {
        let _ = write!(out, " <span class=\"tag b-{0}\">baseline: {0}</span>", b.as_str());
    }
    let _ = writeln!(out, "</h3>\n<p class=\"title\">{}</p>", esc(&r.title));
    // What the agent did, then the sentence that decides it; the spec's other words and how the
    // kit reads them (never styled as the spec) folded under it.
    if let Some(f) = &r.failure {
        let _ = writeln!(out, "<p class=\"msg\">{}</p>", esc(&f.message));
    }
    let quote = |out: &mut String, q: &Quote| {
        let _ = writeln!(
            out,
            "<figure class=\"quote\"><blockquote>{}</blockquote><figcaption><cite>{}</cite></figcaption></figure>",
            esc(&q.text),
            esc(&q.place())
        );
    };
    let deciding = fix_first::deciding(&r.spec, r.level);
    if let Some(q) = &deciding {
        quote(out, q);
    }
    let others: Vec<Quote> = r.spec.shown_quotes().into_iter().filter(|q| Some(q) != deciding.as_ref()).collect();
    if !others.is_empty() || r.spec.interpretation.is_some() {
        out.push_str("<details class=\"words\"><summary>The spec's other words and the kit's reading</summary>\n");
        for q in &others {
            quote(out, q);
        }
        if let Some(reading) = &r.spec.interpretation {
            let _ =
                writeln!(out, "<p class=\"reading\"><span class=\"label\">Kit's reading:</span> {}</p>", esc(reading));
        }
        out.push_str("</details>\n");
    }
    if let Some(f) = &r.failure {
        let mut place = Vec::new();
        if let Some(s) = &f.step_id {
            place.push(format!("step <code>{}</code>", esc(s)));
        }
        if let Some(p) = &f.pointer {
            place.push(format!("at <code>{}</code>", if p.is_empty() { "(root)".to_owned() } else { esc(p) }));
        }
        if !place.is_empty() {
            let _ = writeln!(out, "<p class=\"where\">{}</p>", place.join(" · "));
        }
        match (&f.expected, &f.actual) {
            (Some(e), Some(a)) => diff(out, e, a),
            (Some(e), None) => {
                let _ = writeln!(out, "<p class=\"label\">expected</p><pre class=\"value\">{}</pre>", esc(e));
            }
            (None, Some(a)) => {
                let _ = writeln!(out, "<p class=\"label\">actual</p><pre class=\"value\">{}</pre>", esc(a));
            }
            (None, None) => {}
        }
    }
    if let Some(m) = &r.measurement {
        let _ = writeln!(out, "<p class=\"measurement\">{}</p>", esc(m));
    }
    if let Some(text) = causes::workaround_line(r) {
        let _ = writeln!(out, "<p class=\"workaround\">{}</p>", esc(&text));
    }
    if !same.is_empty() {
        let _ =
            writeln!(out, "<p class=\"same\">{} more check(s) ended the same way: {}</p>", same.len(), link_list(same));
    }
    if !waiting.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"deps\">{} check(s) depend on it and were not decided: {}</p>",
            waiting.len(),
            link_list(waiting)
        );
    }
    if !r.evidence.is_empty() {
        let _ = writeln!(
            out,
            "<details class=\"evidence\" open><summary>Evidence: {} exchange(s), redacted</summary>",
            r.evidence.len()
        );
        for e in &r.evidence {
            exchange(out, e);
        }
        out.push_str("</details>\n");
    }
    out.push_str("</article>\n");
}

fn diff(out: &mut String, expected: &str, actual: &str) {
    out.push_str("<p class=\"label\">expected <span class=\"del\">−</span> / actual <span class=\"ins\">+</span></p>\n<pre class=\"diff\">");
    let lines = textdiff::lines(expected, actual);
    for (side, text) in lines.iter().take(MAX_DIFF_LINES) {
        let class = match side {
            Side::Expected => "del",
            Side::Actual => "ins",
            Side::Both => "eq",
        };
        let _ = writeln!(out, "<span class=\"{class}\">{} {}</span>", side.sign(), esc(text));
    }
    if lines.len() > MAX_DIFF_LINES {
        let _ = writeln!(out, "<span class=\"eq\">  … {} more line(s)</span>", lines.len() - MAX_DIFF_LINES);
    }
    out.push_str("</pre>\n");
}

fn exchange(out: &mut String, e: &Evidence) {
    let status = e.status.map_or_else(|| "no response".to_owned(), |s| s.to_string());
    let step = e.step_id.as_deref().map(|s| format!(" · step <code>{}</code>", esc(s))).unwrap_or_default();
    let _ = writeln!(
        out,
        "<div class=\"exchange\"><p><b>{}</b> <code>{}</code> → {} · {} ms{step}</p>",
        esc(&e.method),
        esc(&e.url),
        esc(&status),
        e.elapsed_ms
    );
    if let Some(curl) = &e.curl {
        let _ = writeln!(out, "<p class=\"label\">reproduce</p><pre class=\"curl\">{}</pre>", esc(curl));
    }
    let request = join_http(&e.request_headers, e.request_body.as_deref());
    if !request.is_empty() {
        let _ = writeln!(out, "<details><summary>request</summary><pre>{}</pre></details>", esc(&request));
    }
    let response = join_http(&e.response_headers, e.response_body.as_deref());
    if !response.is_empty() {
        let _ = writeln!(out, "<details><summary>response</summary><pre>{}</pre></details>", esc(&response));
    }
    out.push_str("</div>\n");
}

fn join_http(headers: &[String], body: Option<&str>) -> String {
    let mut s = headers.join("\n");
    if let Some(b) = body.filter(|b| !b.is_empty()) {
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        s.push_str(b);
    }
    s
}

fn table(out: &mut String, r: &Report) {
    let _ = write!(
        out,
        "<section id=\"checks\">\n<h2>Checks</h2>\n<div class=\"filters\">\
         <input type=\"search\" id=\"q\" placeholder=\"Filter by id, title, section or message\" aria-label=\"Filter\">\
         <select id=\"outcome\" aria-label=\"Outcome\"><option value=\"\">every outcome</option>\
         <option value=\"finding\">findings (fail, error, warn)</option>"
    );
    for o in Outcome::ALL {
        let n = r.checks().filter(|x| x.outcome == o).count();
        let _ = write!(out, "<option value=\"{0}\">{0} ({n})</option>", o.as_str());
    }
    out.push_str("</select><select id=\"profile\" aria-label=\"Profile\"><option value=\"\">every profile</option>");
    for p in r.profiles_in_order() {
        let _ = write!(out, "<option value=\"{0}\">{0}</option>", esc(p));
    }
    let total = r.results.len();
    let _ = write!(
        out,
        "</select> <span id=\"shown\" aria-live=\"polite\">{total} of {total} checks shown</span></div>\n\
         <table id=\"checks-table\"><thead><tr><th>Check</th><th>Outcome</th><th>Profile</th><th>Level</th>\
         <th>Section</th><th>Title</th><th>Detail</th></tr></thead>\n<tbody>\n"
    );
    let findings: Vec<&str> = r.causes.iter().flat_map(|c| &c.findings).map(String::as_str).collect();
    for rr in &r.results {
        let x = &rr.result;
        let detail = detail(x);
        let search = format!("{} {} §{} {} {}", x.id, x.title, x.spec.section, x.profile, detail).to_lowercase();
        let id_cell = if findings.contains(&x.id.as_str()) {
            format!("<a href=\"#{}\">{}</a>", anchor("f", &x.id), esc(&x.id))
        } else {
            esc(&x.id)
        };
        let mut detail_html = esc(&detail);
        if let Some(cause) = &x.depends_on {
            detail_html.push_str(&format!(" <a href=\"#{}\">→ {}</a>", anchor("c", cause), esc(cause)));
        }
        if let Some(b) = rr.baseline_status {
            detail_html.push_str(&format!(" <span class=\"tag b-{0}\">baseline: {0}</span>", b.as_str()));
        }
        let _ = writeln!(
            out,
            "<tr id=\"{}\" data-outcome=\"{o}\" data-profile=\"{}\" data-text=\"{}\"><td>{id_cell}</td>\
             <td><span class=\"tag o-{o}\">{o}</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{detail_html}</td></tr>",
            anchor("c", &x.id),
            esc(&x.profile),
            esc(&search),
            esc(&x.profile),
            x.level.as_str().to_uppercase(),
            esc(&x.spec.section),
            esc(&x.title),
            o = x.outcome.as_str(),
        );
    }
    out.push_str("</tbody></table>\n</section>\n");
}

/// One line on how a check ended.
fn detail(x: &CheckResult) -> String {
    if let Some(reason) = x.skip_reason {
        return match &x.skip_detail {
            Some(d) => format!("{}: {d}", reason.as_str()),
            None => reason.as_str().to_owned(),
        };
    }
    let mut parts = Vec::new();
    if let Some(f) = &x.failure {
        parts.push(f.message.clone());
    }
    if let Some(m) = &x.measurement {
        parts.push(m.clone());
    }
    parts.extend(causes::workaround_line(x));
    parts.join(" · ")
}

fn footer(out: &mut String, r: &Report) {
    let _ = write!(
        out,
        "<footer>\n<p>Generated {} by {} {} · report schema {} · spec commit <code>{}</code></p>\n<ul class=\"suites\">",
        esc(&r.generated_at),
        esc(&r.tool.name),
        esc(&r.tool.version),
        esc(&r.schema_version),
        esc(&r.spec.commit)
    );
    for s in &r.suites {
        let _ = write!(
            out,
            "<li>{} <small>{} · sha256 {}</small></li>",
            esc(&s.name),
            esc(&s.origin),
            esc(s.sha256.get(..12).unwrap_or(&s.sha256))
        );
    }
    out.push_str("</ul>\n</footer>\n");
}

const CSS: &str = r#"
:root{--pass:#1a7f37;--fail:#cf222e;--warn:#bf8700;--error:#8250df;--info:#0969da;--skip:#8c959f;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:1.5rem;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.6rem;margin:0}h2{font-size:1.25rem;border-bottom:1px solid var(--line);padding-bottom:.3rem;margin-top:2rem}h2 small{font-weight:normal;color:var(--muted);font-size:.85rem}
h3{font-size:1rem;margin:0 0 .3rem}code,pre{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.5rem .7rem;overflow:auto;max-height:28rem;white-space:pre-wrap;word-break:break-all}
a{color:var(--info)}.target{color:var(--muted);margin:.2rem 0;word-break:break-all}
.verdict{display:inline-block;font-size:1.2rem;padding:.3rem .8rem;border-radius:6px;color:#fff;margin:.5rem 0}
.verdict span{font-size:.85rem;opacity:.85}.v-conformant{background:var(--pass)}.v-non_conformant{background:var(--fail)}.v-inconclusive{background:var(--error)}.v-usage_error{background:var(--skip)}
.reasons{margin:.2rem 0 .8rem;padding-left:1.2rem}.graded{margin:.2rem 0;font-weight:500}
.fix{padding-left:1.6rem;margin:.3rem 0}.fix li{margin:.35rem 0}.fix .lvl{font-size:.75rem;font-weight:600;border-radius:4px;padding:0 .35rem;color:#fff;background:var(--muted)}.fix .l-must{background:var(--fail)}.fix .l-should{background:var(--warn)}.fix blockquote{margin:.15rem 0 0;font-size:.85rem;color:var(--muted)}
.cause{margin:1.2rem 0}.evidence{color:var(--muted);font-family:var(--mono,monospace);font-size:.85rem;margin:.1rem 0 .3rem}.headline{font-size:1.05rem;margin:.4rem 0}.headline .lvl{color:var(--muted);font-size:.85rem}.members summary,.words summary{cursor:pointer;color:var(--muted)}
.run{display:flex;flex-wrap:wrap;gap:.3rem 1.5rem;margin:.5rem 0}.run div{display:flex;gap:.4rem}.run dt{color:var(--muted)}.run dd{margin:0}
.totals{display:flex;flex-wrap:wrap;gap:.5rem;list-style:none;padding:0}.totals li{border:1px solid var(--line);border-radius:6px;padding:.2rem .7rem}
.totals li b{font-size:1.1rem}.notes{color:var(--muted)}
.profile{display:grid;grid-template-columns:12rem 1fr 24rem;gap:.8rem;align-items:center;margin:.3rem 0}.profile .counts{color:var(--muted);font-size:.9rem}
.bar{display:flex;height:1rem;border-radius:4px;overflow:hidden;background:var(--soft);border:1px solid var(--line)}.seg{display:block;height:100%}
.o-pass{--c:var(--pass)}.o-fail{--c:var(--fail)}.o-warn{--c:var(--warn)}.o-error{--c:var(--error)}.o-info{--c:var(--info)}.o-skip{--c:var(--skip)}.o-all{--c:var(--fg)}
.seg{background:var(--c)}.totals li{border-left:4px solid var(--c)}
.tag{display:inline-block;border-radius:4px;padding:0 .4rem;font-size:.75rem;font-weight:600;color:#fff;background:var(--c,var(--skip))}
.b-accepted{--c:var(--info)}.b-stale{--c:var(--fail)}.b-expired{--c:var(--warn)}.b-skipped,.b-undecided,.b-unknown{--c:var(--skip)}
.finding{border:1px solid var(--line);border-left:4px solid var(--c);border-radius:6px;padding:.7rem 1rem;margin:.8rem 0}
.finding .sec{color:var(--muted);font-weight:normal}.finding .id{color:inherit}.title{margin:.2rem 0;font-weight:500}
.quote{margin:.4rem 0}.quote blockquote{margin:0;padding:.2rem .8rem;border-left:3px solid var(--info);font-family:Georgia,"Times New Roman",serif;font-size:1rem}
.quote figcaption{padding:0 .8rem;color:var(--muted);font-size:.85rem}.quote cite{font-style:normal}
.reading{margin:.4rem 0;padding:.2rem .8rem;border-left:3px dashed var(--skip);color:var(--muted);font-size:.9rem}.reading .label{font-weight:600}
.msg{margin:.4rem 0}.where,.same,.deps,.label{color:var(--muted);margin:.3rem 0;font-size:.9rem}
.workaround{color:var(--warn);margin:.3rem 0;font-size:.9rem}
.diff span{display:inline-block;width:100%}.diff .del{color:var(--fail);background:#ffebe9}.diff .ins{color:var(--pass);background:#dafbe1}
span.del{color:var(--fail)}span.ins{color:var(--pass)}
.evidence{margin-top:.5rem}.evidence summary{cursor:pointer;color:var(--muted)}.exchange{border-top:1px dashed var(--line);margin-top:.4rem;padding-top:.4rem}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}.filters input{flex:1;min-width:16rem;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px}
.filters select{padding:.3rem;border:1px solid var(--line);border-radius:6px}#shown{color:var(--muted)}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid var(--line)}
th{background:var(--soft);position:sticky;top:0}td:first-child{white-space:nowrap;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
tr[hidden]{display:none}footer{margin-top:2rem;color:var(--muted);font-size:.85rem}.suites{columns:2}
@media (max-width:800px){.profile{grid-template-columns:1fr}.suites{columns:1}}
"#;

const SCRIPT: &str = r#"
(function () {
  var q = document.getElementById('q'), outcome = document.getElementById('outcome'),
      profile = document.getElementById('profile'), shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#checks-table tbody tr'));
  var findings = ['fail', 'error', 'warn'];
  function matches(row, text, o, p) {
    var ro = row.getAttribute('data-outcome');
    if (text && row.getAttribute('data-text').indexOf(text) < 0) return false;
    if (o && (o === 'finding' ? findings.indexOf(ro) < 0 : ro !== o)) return false;
    return !p || row.getAttribute('data-profile') === p;
  }
  function apply() {
    var text = q.value.trim().toLowerCase(), o = outcome.value, p = profile.value, n = 0;
    rows.forEach(function (row) {
      var ok = matches(row, text, o, p);
      row.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' checks shown';
    return [text && 'q=' + encodeURIComponent(text), o && 'outcome=' + o, p && 'profile=' + encodeURIComponent(p)]
      .filter(Boolean).join('&');
  }
  function remember() {
    var hash = apply();
    try { history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search); } catch (e) {}
  }
  location.hash.slice(1).split('&').forEach(function (kv) {
    var i = kv.indexOf('=');
    if (i < 0) return;
    var k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
    if (k === 'q') q.value = v;
    if (k === 'outcome') outcome.value = v;
    if (k === 'profile') profile.value = v;
  });
  [q, outcome, profile].forEach(function (el) {
    el.addEventListener('input', remember);
    el.addEventListener('change', remember);
  });
  apply();
  document.documentElement.setAttribute('data-ready', 'true');
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_text_and_attributes() {
        assert_eq!(esc(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn anchors_are_safe_ids() {
        assert_eq!(anchor("c", "CORE-SEND-001"), "c-CORE-SEND-001");
        assert_eq!(anchor("f", "a b/\"c"), "f-a_b__c");
    }
}
