// The site icon: a white shopping bag on the header's navy, drawn from one pixel map so the SVG
// (modern browsers, via <link rel="icon">) and /favicon.ico (what browsers and tools ask for by
// default) show the same picture. Built once at start-up; nothing binary lives in the repository.

const NAVY = [0x14, 0x21, 0x3d] as const;
const WHITE = [0xff, 0xff, 0xff] as const;

// 16 × 16; '#' is white, '.' navy. The bag's handle and body with a notch for the fold.
const GLYPH = [
  '................',
  '................',
  '......####......',
  '.....#....#.....',
  '.....#....#.....',
  '...##########...',
  '...##########...',
  '...##########...',
  '...####..####...',
  '...####..####...',
  '...##########...',
  '...##########...',
  '...##########...',
  '...##########...',
  '................',
  '................',
] as const;

const SIZE = GLYPH.length;

function white(x: number, y: number): boolean {
  return GLYPH[y]![x] === '#';
}

/** The SVG: a navy rounded square and one rectangle per run of white pixels in a row. */
export function faviconSvg(): string {
  const rects: string[] = [];
  for (let y = 0; y < SIZE; y++) {
    let x = 0;
    while (x < SIZE) {
      if (!white(x, y)) {
        x++;
        continue;
      }
      const start = x;
      while (x < SIZE && white(x, y)) x++;
      rects.push(`<rect x="${start}" y="${y}" width="${x - start}" height="1"/>`);
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${SIZE} ${SIZE}"><rect width="${SIZE}" height="${SIZE}" rx="3" ` +
    `fill="#14213d"/><g fill="#fff">${rects.join('')}</g></svg>\n`
  );
}

/**
 * An ICO file holding one 32 × 32 32-bit bitmap (the map scaled twice): ICONDIR, one ICONDIRENTRY,
 * then a BITMAPINFOHEADER whose height counts the colour rows and the AND mask together, the BGRA
 * rows bottom-up, and an all-zero AND mask (the alpha channel already says what shows).
 */
export function faviconIco(): Buffer {
  const px = SIZE * 2;
  const colour = px * px * 4;
  const mask = (px / 8) * px; // one bit per pixel; 32 pixels make 4 bytes, already a multiple of 4
  const image = 40 + colour + mask;
  const out = Buffer.alloc(6 + 16 + image);
  out.writeUInt16LE(0, 0); // reserved
  out.writeUInt16LE(1, 2); // type: icon
  out.writeUInt16LE(1, 4); // one image
  out.writeUInt8(px, 6); // width
  out.writeUInt8(px, 7); // height
  out.writeUInt8(0, 8); // no palette
  out.writeUInt8(0, 9); // reserved
  out.writeUInt16LE(1, 10); // colour planes
  out.writeUInt16LE(32, 12); // bits per pixel
  out.writeUInt32LE(image, 14); // bytes of the image
  out.writeUInt32LE(22, 18); // where the image starts
  const bmp = 22;
  out.writeUInt32LE(40, bmp); // header size
  out.writeInt32LE(px, bmp + 4);
  out.writeInt32LE(px * 2, bmp + 8); // colour rows and mask rows
  out.writeUInt16LE(1, bmp + 12);
  out.writeUInt16LE(32, bmp + 14);
  out.writeUInt32LE(0, bmp + 16); // no compression
  out.writeUInt32LE(colour + mask, bmp + 20);
  let at = bmp + 40;
  for (let row = px - 1; row >= 0; row--) {
    for (let col = 0; col < px; col++) {
      const [r, g, b] = white(col >> 1, row >> 1) ? WHITE : NAVY;
      out.writeUInt8(b, at);
      out.writeUInt8(g, at + 1);
      out.writeUInt8(r, at + 2);
      out.writeUInt8(0xff, at + 3);
      at += 4;
    }
  }
  return out;
}
