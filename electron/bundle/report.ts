import type { BundleManifest } from './format';
import type { ZipEntry } from './zip-write';
import { OUTCOME_TEXT, type Outcome } from '../../shared/outcome';

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
.outcome{font:600 10.5px ui-monospace,monospace;text-transform:uppercase;padding:0 5px;border-radius:3px;background:#eceff3;color:#4a5360}
.outcome.good{background:#dcf3e3;color:#136b2e}.outcome.bad{background:#fbe0e0;color:#a11a1a}
.rules{font-size:12px}.rules td{padding:0 8px 0 0}#runs li .sub{color:#6a7380;font-size:11px}
`;

// Vanilla JS, no network, no eval: the runs and states come from the inline JSON block, each run's
// events.jsonl from its gzip block (base64), unpacked with the browser's DecompressionStream; all is
// shown with textContent only, so nothing in an event can become markup.
const SCRIPT = `
(function(){
var data=JSON.parse(document.getElementById('bundle-data').textContent);
var PAGE=500,cur=0,page=0,sel=null,status='unpacking the events…';
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e;}
function withPlaceholders(target,text){var re=/\\[REDACTED:[^\\]]+\\]/g,last=0,m;
 while((m=re.exec(text))){target.appendChild(document.createTextNode(text.slice(last,m.index)));target.appendChild(el('mark','ph',m[0]));last=m.index+m[0].length;}
 target.appendChild(document.createTextNode(text.slice(last)));}
function unpack(i){var b=atob(document.getElementById('events-'+i).textContent),n=b.length,bytes=new Uint8Array(n);
 for(var k=0;k<n;k++)bytes[k]=b.charCodeAt(k);
 return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(function(t){
  var evs=[],s=0;while(s<t.length){var nl=t.indexOf('\\n',s);if(nl<0)nl=t.length;if(nl>s)evs.push(JSON.parse(t.slice(s,nl)));s=nl+1;}
  data.runs[i].events=evs;});}
function outcome(r){var o=r.outcome,s=el('span','outcome '+(o?(o.failed?'bad':'good'):'none'),o?o.word:((r.state&&r.state.status)||'no outcome'));
 s.setAttribute('data-testid','run-outcome');s.setAttribute('data-outcome',o?o.word:'');if(o)s.title=o.title;return s;}
function runsList(){var ul=document.getElementById('runs');ul.textContent='';
 data.runs.forEach(function(r,i){var li=el('li',i===cur?'sel':'');li.setAttribute('data-testid','run-item');var top=el('div','');top.appendChild(outcome(r));top.appendChild(document.createTextNode(' '+r.run_id));li.appendChild(top);
  li.appendChild(el('div','sub',r.count+' events, status '+((r.state&&r.state.status)||'')));
  li.onclick=function(){cur=i;page=0;sel=null;render();};ul.appendChild(li);});}
function timeline(){var r=data.runs[cur],ul=document.getElementById('timeline-list');ul.textContent='';if(!r)return;
 var evs=r.events;if(!evs){document.getElementById('page-label').textContent=status;return;}
 var from=page*PAGE,to=Math.min(evs.length,from+PAGE);
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
function heading(){var h=document.getElementById('run-heading'),r=data.runs[cur];h.textContent='';if(!r)return;
 h.appendChild(outcome(r));h.appendChild(document.createTextNode(' '+r.run_id));}
function render(){runsList();heading();timeline();payload();state();}
document.getElementById('prev').onclick=function(){if(page>0){page--;render();}};
document.getElementById('next').onclick=function(){var r=data.runs[cur];if(r&&r.events&&(page+1)*PAGE<r.events.length){page++;render();}};
render();
if(typeof DecompressionStream==='undefined'){status='this browser cannot unpack the events: it needs DecompressionStream (Chromium 80, Firefox 113, Safari 16.4 or later)';render();return;}
Promise.all(data.runs.map(function(_,i){return unpack(i);})).then(render,function(e){status='the events cannot be unpacked: '+e;render();});
})();
`;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Escapes `<` in the JSON block: it only occurs inside JSON strings, where \u003c means the same. */
const esc3c = (t: string): string => (t.includes('<') ? t.replace(/</g, '\\u003c') : t);

/** gzip member header: deflate, no name, no time, unknown OS (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * A deflated zip entry as a gzip file (RFC 1952): the same deflate stream between a header and a
 * trailer of its CRC-32 and size, which the entry has already. Nothing is compressed again.
 */
export function gzipOfEntry(e: ZipEntry): Buffer[] {
  if (e.stored) throw new Error(`${e.name} is stored, not deflated`);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(e.crc >>> 0, 0);
  trailer.writeUInt32LE(e.size % 2 ** 32, 4);
  return [GZIP_HEADER, ...e.data, trailer];
}

/** Base64 of the pieces' bytes in order, in pieces (no one string of the whole). */
export function base64Pieces(pieces: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let carry = Buffer.alloc(0);
  for (const p of pieces) {
    // Complete the triple left over from the piece before, then whole triples of this one.
    let at = 0;
    if (carry.length > 0) {
      at = Math.min(3 - carry.length, p.length);
      carry = Buffer.concat([carry, p.subarray(0, at)]);
      if (carry.length < 3) continue;
      out.push(Buffer.from(carry.toString('base64'), 'latin1'));
    }
    const whole = at + Math.floor((p.length - at) / 3) * 3;
    if (whole > at) out.push(Buffer.from(p.toString('base64', at, whole), 'latin1'));
    carry = Buffer.from(p.subarray(whole));
  }
  if (carry.length > 0) out.push(Buffer.from(carry.toString('base64'), 'latin1'));
  return out;
}

/** report.html's bytes in pieces, and the text the exporter's output scan must read for it. */
export interface ReportPage {
  pieces: Buffer[];
  /**
   * The page as decoded, but for the runs' events, which are their events.jsonl entries' exact
   * bytes (gzip, base64) and scanned as those: every other byte of the page, the JSON block as is.
   */
  scanText: string;
}

/**
 * report.html: one self-contained page (inline CSS and JS, a CSP that forbids every fetch) that
 * shows the bundle's runs read-only: a timeline per run, an event's payload on click, the final state.
 * Each run's events are its events.jsonl as the bundle holds it, deflated already: a gzip file of
 * that same deflate stream, in base64, unpacked by the page. The page is stored in the zip as it
 * is (it would not deflate further), a third of the events' size instead of all of it, so
 * verify-bundle hashes a third as many bytes and inflates none. The JSON block (runs, states)
 * goes through esc3c, so no `</script>` or `<!--` in a state can end it; base64 holds no `<`.
 */
export function reportPage(
  manifest: BundleManifest,
  runs: readonly { run_id: string; state: unknown; outcome?: Outcome | null; events: ZipEntry }[],
): ReportPage {
  const rules = Object.entries(manifest.redaction.rules)
    .map(([rule, n]) => `<tr><td>${esc(rule)}</td><td>${n}</td></tr>`)
    .join('');
  const totalEvents = manifest.runs.reduce((n, r) => n + r.events, 0);
  const counts = new Map(manifest.runs.map((r) => [r.run_id, r.events]));
  const json = esc3c(
    JSON.stringify({
      runs: runs.map((r) => {
        const o = r.outcome ?? null;
        const outcome = o
          ? { word: OUTCOME_TEXT[o].label, failed: OUTCOME_TEXT[o].failed, title: OUTCOME_TEXT[o].title }
          : null;
        return { run_id: r.run_id, count: counts.get(r.run_id) ?? 0, state: r.state, outcome };
      }),
    }),
  );
  const head = `<!doctype html>
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
<section data-testid="timeline"><h2 id="run-heading" data-testid="run-heading"></h2><div class="pager"><button id="prev">‹</button><span id="page-label"></span><button id="next">›</button></div><ul id="timeline-list"></ul></section>
<section><h2>Payload</h2><pre id="payload-body" data-testid="payload"></pre><h2>Final state</h2><pre id="state-body" data-testid="state"></pre></section>
</main>
<script type="application/json" id="bundle-data">${json}</script>
`;
  const end = `<script>${SCRIPT}</script>
</body></html>
`;
  const pieces: Buffer[] = [Buffer.from(head, 'utf8')];
  const frame: string[] = [head];
  runs.forEach((r, i) => {
    const open = `<script type="application/gzip;base64" id="events-${i}">`;
    const close = '</script>\n';
    pieces.push(
      Buffer.from(open, 'utf8'),
      ...base64Pieces(gzipOfEntry(r.events)),
      Buffer.from(close, 'utf8'),
    );
    frame.push(open + close);
  });
  pieces.push(Buffer.from(end, 'utf8'));
  frame.push(end);
  return { pieces, scanText: frame.join('') };
}
