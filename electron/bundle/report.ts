import type { BundleManifest } from './format';

const CSS = `
*{box-sizing:border-box}body{margin:0;font:13px/1.45 system-ui,sans-serif;color:#1d232b;background:#f6f7f9}
header{padding:10px 16px;background:#1d232b;color:#fff}header h1{font-size:16px;margin:0 0 4px}
header .meta{opacity:.8;font-size:12px}main{display:grid;grid-template-columns:220px 1fr 1fr;gap:10px;padding:10px;height:calc(100vh - 64px)}
section{background:#fff;border:1px solid #d9dde3;border-radius:6px;overflow:auto;min-height:0}
h2{font-size:13px;margin:0;padding:6px 10px;border-bottom:1px solid #e4e7eb;background:#fafbfc;position:sticky;top:0}
ul{list-style:none;margin:0;padding:0}li{padding:3px 10px;cursor:pointer;border-bottom:1px solid #f0f2f4;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
li:hover{background:#eef3fb}li.sel{background:#d7e6fb}.seq{display:inline-block;min-width:52px;color:#6a7380;font-variant-numeric:tabular-nums}
.badge{font-size:11px;padding:0 5px;border-radius:8px;background:#fde6c8;color:#7a4a00;margin-left:6px}
pre{margin:0;padding:8px 10px;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace}
mark.ph{background:#fde6c8;color:#7a4a00;border-radius:3px}.pager{padding:4px 10px;display:flex;gap:6px;align-items:center}
.rules{font-size:12px}.rules td{padding:0 8px 0 0}#runs li .sub{color:#6a7380;font-size:11px}
`;

// Vanilla JS, no network, no eval: data comes from the inline JSON block and is shown with
// textContent only, so nothing in an event can become markup.
const SCRIPT = `
(function(){
var data=JSON.parse(document.getElementById('bundle-data').textContent);
var PAGE=500,cur=0,page=0,sel=null;
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e;}
function withPlaceholders(target,text){var re=/\\[REDACTED:[^\\]]+\\]/g,last=0,m;
 while((m=re.exec(text))){target.appendChild(document.createTextNode(text.slice(last,m.index)));target.appendChild(el('mark','ph',m[0]));last=m.index+m[0].length;}
 target.appendChild(document.createTextNode(text.slice(last)));}
function runsList(){var ul=document.getElementById('runs');ul.textContent='';
 data.runs.forEach(function(r,i){var li=el('li',i===cur?'sel':'');li.setAttribute('data-testid','run-item');li.appendChild(el('div','',r.run_id));
  li.appendChild(el('div','sub',r.events.length+' events, '+((r.state&&r.state.status)||'')));
  li.onclick=function(){cur=i;page=0;sel=null;render();};ul.appendChild(li);});}
function timeline(){var r=data.runs[cur],ul=document.getElementById('timeline-list');ul.textContent='';if(!r)return;
 var evs=r.events,from=page*PAGE,to=Math.min(evs.length,from+PAGE);
 for(var i=from;i<to;i++){(function(e){var li=el('li',sel===e?'sel':'');li.setAttribute('data-testid','timeline-item');li.setAttribute('data-seq',String(e.seq));
  li.appendChild(el('span','seq',String(e.seq)));li.appendChild(document.createTextNode(e.kind));
  if(e.digest)li.appendChild(el('span','badge','redacted'));
  li.onclick=function(){sel=e;render();};ul.appendChild(li);})(evs[i]);}
 document.getElementById('page-label').textContent=evs.length?(from+1)+'-'+to+' of '+evs.length:'no events';}
function payload(){var pre=document.getElementById('payload-body');pre.textContent='';
 if(!sel){pre.textContent='Select an event in the timeline.';return;}
 var head='seq '+sel.seq+'  '+sel.kind+'  '+sel.at+(sel.digest?'\\n(redacted: the chain links its original digest '+sel.digest+')':'')+'\\n\\n';
 withPlaceholders(pre,head+JSON.stringify(sel.payload,null,2));}
function state(){var pre=document.getElementById('state-body'),r=data.runs[cur];pre.textContent='';
 if(r)withPlaceholders(pre,JSON.stringify(r.state,null,2));}
function render(){runsList();timeline();payload();state();}
document.getElementById('prev').onclick=function(){if(page>0){page--;render();}};
document.getElementById('next').onclick=function(){var r=data.runs[cur];if(r&&(page+1)*PAGE<r.events.length){page++;render();}};
render();
})();
`;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Escapes `<` inside the data block: it only occurs inside JSON strings, where \u003c means the same. */
const esc3c = (t: string): string => (t.includes('<') ? t.replace(/</g, '\\u003c') : t);

/**
 * report.html around its event lines, so the exporter can stream the lines (deflated piece by piece)
 * and fill the rest in once the states and counts are known: the page is `head`, run 0's event
 * text (reportEventText), `after[0]`, run 1's event text, …, `after[n-1]`.
 */
export interface ReportFrame {
  head: string;
  /** Run i's state and the start of run i+1, or the end of the page. */
  after: string[];
  /** The frame's own text, for the exporter's output scan (the event lines are scanned apart). */
  scanText: string;
}

/** A run's event lines as they sit in the data block: joined by ',', with `<` escaped. */
export function reportEventText(
  lines: readonly string[],
  first: boolean,
): { text: string; escapedLines: string[] } {
  let text = (first || lines.length === 0 ? '' : ',') + lines.join(',');
  const escapedLines: string[] = [];
  if (text.includes('<')) {
    text = esc3c(text);
    for (const line of lines) if (line.includes('<')) escapedLines.push(esc3c(line));
  }
  return { text, escapedLines };
}

/**
 * reportEventText from the bytes of a chunk of events.jsonl (complete lines), in one copy and no
 * string: the same bytes, as long as no line holds `<` (then null: use reportEventText).
 */
export function reportEventBytes(chunk: Buffer, first: boolean): Buffer | null {
  if (chunk.length === 0 || chunk.indexOf(0x3c) !== -1) return null;
  const body = chunk.length - 1; // without the last newline
  const out = Buffer.allocUnsafe(body + (first ? 0 : 1));
  let at = 0;
  if (!first) out[at++] = 0x2c;
  chunk.copy(out, at, 0, body);
  // A newline byte never occurs inside a UTF-8 sequence, nor inside a JSON line.
  for (let i = out.indexOf(0x0a, at); i !== -1; i = out.indexOf(0x0a, i + 1)) out[i] = 0x2c;
  return out;
}

/**
 * report.html: one self-contained page (inline CSS and JS, a CSP that forbids every fetch) that
 * shows the bundle's runs read-only: a timeline per run, an event's payload on click, the final state.
 * Important: every part of the data block goes through esc3c, so no `</script>` or `<!--` in event
 * content can end it.
 */
export function reportFrame(
  manifest: BundleManifest,
  runs: readonly { run_id: string; state: unknown }[],
): ReportFrame {
  const open = (i: number) => `{"run_id":${JSON.stringify(runs[i]!.run_id)},"events":[`;
  const close = (i: number) => `],"state":${JSON.stringify(runs[i]!.state)}}`;
  const rules = Object.entries(manifest.redaction.rules)
    .map(([rule, n]) => `<tr><td>${esc(rule)}</td><td>${n}</td></tr>`)
    .join('');
  const totalEvents = manifest.runs.reduce((n, r) => n + r.events, 0);
  const before = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ProofLoop audit bundle</title><style>${CSS}</style></head>
<body>
<header><h1>ProofLoop audit bundle (read-only)</h1>
<div class="meta">created ${esc(manifest.created_at)} by ProofLoop ${esc(manifest.app.version)} · profile ${esc(manifest.profile)} · ${manifest.runs.length} runs, ${totalEvents} events, ${manifest.redaction.events_redacted} redacted events${manifest.signer ? ` · signed by ${esc(manifest.signer.fingerprint)}` : ' · unsigned'} · this page does not verify the bundle: run <code>proofloop verify-bundle</code></div></header>
<main>
<section><h2>Runs</h2><ul id="runs" data-testid="runs"></ul>
<h2>Redactions per rule</h2><table class="rules" data-testid="rules"><tbody>${rules || '<tr><td>none</td></tr>'}</tbody></table></section>
<section data-testid="timeline"><h2>Timeline</h2><div class="pager"><button id="prev">‹</button><span id="page-label"></span><button id="next">›</button></div><ul id="timeline-list"></ul></section>
<section><h2>Payload</h2><pre id="payload-body" data-testid="payload"></pre><h2>Final state</h2><pre id="state-body" data-testid="state"></pre></section>
</main>
<script type="application/json" id="bundle-data">`;
  const end = `</script>
<script>${SCRIPT}</script>
</body></html>
`;
  const head = before + esc3c('{"runs":[' + (runs.length ? open(0) : ''));
  const after = runs.map((_, i) =>
    i + 1 < runs.length ? esc3c(close(i) + ',' + open(i + 1)) : esc3c(close(i) + ']}') + end,
  );
  if (runs.length === 0) return { head: head + ']}' + end, after: [], scanText: head + ']}' + end };
  return { head, after, scanText: [head, ...after].join('\n') };
}
