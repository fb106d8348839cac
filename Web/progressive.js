// The seed's three ways to load one large image over a network, against `tessera serve`: each strategy draws
// every image it receives onto one canvas as soon as it decodes, and logs when (milliseconds since the start).

const params = new URLSearchParams(location.search);
const server = (params.get("server") || location.origin).replace(/\/$/, "");
const strategies = { "sizes-first": sizesFirst, "stream": stream, "thumbnail-then-stream": thumbnailThenStream };
const strategy = strategies[params.get("strategy")] ? params.get("strategy") : "sizes-first";
const canvas = document.getElementById("image");
const logElement = document.getElementById("log");
const start = performance.now();

/** Appends a timed line to the log on the page. */
function log(message) {
  logElement.textContent += `${(performance.now() - start).toFixed(0).padStart(6)} ms  ${message}\n`;
}

/** Draws a decoded image over the whole canvas, scaled to the canvas's size (the target size). */
function draw(bitmap) {
  canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
}

/** The identifier to load: ?id=, or the first image in the server's list. */
async function imageIdentifier() {
  if (params.get("id")) return params.get("id");
  const listing = await (await fetch(server + "/")).text();
  const match = listing.match(/href="[^"]*\/iiif\/([^"/]+)\/info\.json"/);
  if (!match) throw new Error("the server lists no images");
  return decodeURIComponent(match[1]);
}

/** Fetches and decodes an image, drawing it; resolves with its size. */
async function loadAndDraw(url, label) {
  const bitmap = await createImageBitmap(await (await fetch(url)).blob());
  draw(bitmap);
  log(`${label}: ${bitmap.width} x ${bitmap.height}`);
  return bitmap;
}

/** IIIF sizes from info.json, smallest first, each drawn over the last, up to the first that covers the target. */
async function sizesFirst(id, info, target) {
  const sizes = [...(info.sizes || [])].sort((a, b) => a.width - b.width);
  sizes.push({ width: info.width, height: info.height });
  for (const size of sizes) {
    const fits = Math.max(size.width, size.height) >= target;
    const width = fits ? Math.round(size.width * target / Math.max(size.width, size.height)) : size.width;
    await loadAndDraw(`${server}/iiif/${encodeURIComponent(id)}/full/${width},/0/default.jpg`, `size ${width}`);
    if (fits) return;
  }
}

/** The progressive JPEG stream: whenever a new scan begins arriving, the bytes before it, with an end-of-image
 *  marker added, are a complete JPEG of the scans so far, which the browser decodes and we draw. */
async function stream(id, info, target) {
  const response = await fetch(`${server}/stream/${encodeURIComponent(id)}/${target}`);
  const reader = response.body.getReader();
  const chunks = [];
  const scans = { count: 0, last: 0, offset: 0, start: 0 };
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    const before = scans.count;
    countScans(value, scans);
    // A new scan has begun: the one before it is complete.
    if (scans.count > before && scans.count > 1) {
      const blob = new Blob(chunks);
      await drawBlob(new Blob([blob.slice(0, scans.start), END_OF_IMAGE], { type: "image/jpeg" }),
                     `stream: ${received} bytes, scan ${scans.count - 1} complete`);
    }
  }
  await drawBlob(new Blob(chunks, { type: "image/jpeg" }), `stream: ${received} bytes, complete`);
}

const END_OF_IMAGE = new Uint8Array([0xff, 0xd9]);

/** Counts the start-of-scan markers (0xFF 0xDA; entropy-coded data never holds one) in a new chunk, noting where
 *  the last one starts and carrying the chunk's last byte to the next. */
function countScans(chunk, scans) {
  for (const byte of chunk) {
    if (scans.last === 0xff && byte === 0xda) {
      scans.count++;
      scans.start = scans.offset - 1;
    }
    scans.last = byte;
    scans.offset++;
  }
}

async function drawBlob(blob, label) {
  try {
    draw(await createImageBitmap(blob));
    log(label);
  } catch (error) {
    log(`${label} (not decodable yet: ${error.message})`);
  }
}

/** A small thumbnail at once, then the stream over it. */
async function thumbnailThenStream(id, info, target) {
  await loadAndDraw(`${server}/iiif/${encodeURIComponent(id)}/full/!256,256/0/default.jpg`, "thumbnail");
  await stream(id, info, target);
}

async function main() {
  const header = document.getElementById("strategies");
  for (const name of Object.keys(strategies)) {
    const link = document.createElement("a");
    const query = new URLSearchParams(params);
    query.set("strategy", name);
    link.href = "?" + query;
    link.textContent = name;
    if (name === strategy) link.className = "current";
    header.append(link);
  }
  const id = await imageIdentifier();
  const info = await (await fetch(`${server}/iiif/${encodeURIComponent(id)}/info.json`)).json();
  const target = Number(params.get("size")) || Math.round(innerWidth * devicePixelRatio);
  const scale = Math.min(1, target / Math.max(info.width, info.height));
  canvas.width = Math.round(info.width * scale);
  canvas.height = Math.round(info.height * scale);
  log(`${strategy}: ${id}, ${info.width} x ${info.height}, loading at ${canvas.width} x ${canvas.height}`);
  await strategies[strategy](id, info, Math.max(canvas.width, canvas.height));
  log("done");
}

main().catch((error) => log(`failed: ${error.message}`));
