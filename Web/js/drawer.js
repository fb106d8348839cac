// Paints draw commands on a canvas of device pixels. Every tile edge is mapped from content points to device pixels
// by one function and rounded to a whole pixel, so neighbouring tiles, which share their edge's content value,
// share its device pixel too: no gap and no overlap between tiles at any zoom or devicePixelRatio.

/** A canvas sized in device pixels over a view measured in CSS pixels (the viewport's points). */
export class Drawer {
  constructor(canvas, background) {
    this.canvas = canvas;
    this.context = canvas.getContext("2d", { alpha: false });
    this.background = background;
    this.pixelRatio = 1;
  }

  /** Sizes the canvas for a view of `viewSize` CSS pixels at `pixelRatio` device pixels per CSS pixel. */
  resize(viewSize, pixelRatio) {
    this.pixelRatio = pixelRatio;
    this.canvas.width = Math.round(viewSize.width * pixelRatio);
    this.canvas.height = Math.round(viewSize.height * pixelRatio);
  }

  /** Clears to the background and paints `commands` in order for `viewport`. */
  draw(commands, viewport) {
    const context = this.context;
    context.globalAlpha = 1;
    context.fillStyle = this.background;
    context.fillRect(0, 0, this.canvas.width, this.canvas.height);
    context.imageSmoothingEnabled = true;
    context.imageSmoothingQuality = "medium";
    const { zoomScale, contentOffset } = viewport;
    const ratio = this.pixelRatio;
    const deviceX = (x) => Math.round((x * zoomScale - contentOffset.x) * ratio);
    const deviceY = (y) => Math.round((y * zoomScale - contentOffset.y) * ratio);
    for (const { tile, source, edges, alpha } of commands) {
      const x0 = deviceX(edges.x0), y0 = deviceY(edges.y0);
      const width = deviceX(edges.x1) - x0, height = deviceY(edges.y1) - y0;
      if (width <= 0 || height <= 0 || alpha <= 0) continue;
      const { content } = tile;
      context.globalAlpha = alpha;
      context.drawImage(tile.bitmap, content.x + source.x * content.scaleX, content.y + source.y * content.scaleY,
        source.width * content.scaleX, source.height * content.scaleY, x0, y0, width, height);
    }
    context.globalAlpha = 1;
  }
}
