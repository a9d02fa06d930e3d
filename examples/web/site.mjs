// A small web site for docs/web.md: `node examples/web/site.mjs PORT` serves, on 127.0.0.1,
// an article wrapped in navigation, an ad, a "Trending" sidebar and a footer (/article), a PDF
// (/report.pdf), a 404 for anything else, and a SearXNG-style JSON search (/search?q=…&format=json)
// whose hits are those two pages. It prints its URL, then serves until stopped. Node only.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);

const ARTICLE = `<!doctype html>
<html><head><title>Tidal Power in the Bay of Fundy | Coastal News</title></head>
<body>
<header><nav><a href="/">Home</a> | <a href="/weather">Weather</a> | <a href="/sports">Sports</a> | <a href="/login">Subscribe now</a></nav></header>
<div class="ad">BUY ONE GET ONE FREE: garden gnomes at Gnome Depot</div>
<main><article>
<h1>Tidal Power in the Bay of Fundy</h1>
<p>The Bay of Fundy has the highest tides in the world, rising as much as sixteen metres twice a day.
Engineers have spent decades trying to turn that motion into electricity without harming the fish that migrate through the bay.</p>
<p>In 2024 a new turbine array began feeding the Nova Scotia grid, producing enough power for about 2,500 homes.
The array sits on the sea floor and turns slowly, which the project says lets fish pass safely.</p>
<h2>What comes next</h2>
<p>Regulators will review two years of monitoring data before allowing the array to grow.
If the data hold up, the operators plan to add twenty more turbines by 2030.</p>
</article></main>
<aside><h3>Trending</h3><ul><li>Ten celebrity sandwiches</li><li>Local cat elected mayor</li></ul></aside>
<footer><p>Copyright 2026 Coastal News. All rights reserved. Privacy | Terms | Cookie settings</p></footer>
</body></html>`;

/** A one-page PDF with these lines of text (Helvetica), written by hand. */
function pdf(lines) {
  const text = lines.map((line, index) => `BT /F1 12 Tf 72 ${720 - index * 16} Td (${line}) Tj ET`).join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = Buffer.byteLength(out);
    out += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const REPORT = pdf(['Quarterly report of the Fundy Tidal Array', 'Output in the third quarter: 4.2 GWh.']);

const server = createServer((request, response) => {
  const base = `http://${request.headers.host}`;
  const url = new URL(request.url ?? '/', base);
  if (url.pathname === '/article') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return response.end(ARTICLE);
  }
  if (url.pathname === '/report.pdf') {
    response.writeHead(200, { 'content-type': 'application/pdf' });
    return response.end(REPORT);
  }
  if (url.pathname === '/search' && url.searchParams.get('format') === 'json') {
    const results = [
      { title: 'Tidal Power in the Bay of Fundy', url: `${base}/article`, content: 'The highest tides in the world.' },
      { title: 'Fundy Tidal Array quarterly report', url: `${base}/report.pdf`, content: 'Output: 4.2 GWh.' },
    ];
    response.writeHead(200, { 'content-type': 'application/json' });
    return response.end(JSON.stringify({ query: url.searchParams.get('q'), results }));
  }
  response.writeHead(404, { 'content-type': 'text/html' });
  response.end('<html><body><h1>Not found</h1></body></html>');
});
server.listen(port, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
