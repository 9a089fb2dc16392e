// SHA-256 (FIPS 180-4), for the onboarding example's user id: AssemblyScript's standard library
// has no hash functions, and the id must equal the one the Go example derives with crypto/sha256.

const K: StaticArray<u32> = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/** sha256 is the SHA-256 digest of data. */
export function sha256(data: Uint8Array): Uint8Array {
  // Pad: a 1 bit, zeros to 56 mod 64 bytes, then the bit length as a big-endian u64.
  const n = data.length;
  const total = ((n + 8) / 64 + 1) * 64;
  const msg = new Uint8Array(total);
  msg.set(data);
  msg[n] = 0x80;
  const bits = <u64>n * 8;
  for (let i = 0; i < 8; i++) msg[total - 1 - i] = <u8>(bits >> (<u64>i * 8));

  let h0: u32 = 0x6a09e667, h1: u32 = 0xbb67ae85, h2: u32 = 0x3c6ef372, h3: u32 = 0xa54ff53a;
  let h4: u32 = 0x510e527f, h5: u32 = 0x9b05688c, h6: u32 = 0x1f83d9ab, h7: u32 = 0x5be0cd19;
  const w = new StaticArray<u32>(64);
  for (let off = 0; off < total; off += 64) {
    for (let t = 0; t < 16; t++) {
      const p = off + t * 4;
      w[t] = (<u32>msg[p] << 24) | (<u32>msg[p + 1] << 16) | (<u32>msg[p + 2] << 8) | <u32>msg[p + 3];
    }
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15], b = w[t - 2];
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let t = 0; t < 64; t++) {
      const t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
      const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h0 += a;
    h1 += b;
    h2 += c;
    h3 += d;
    h4 += e;
    h5 += f;
    h6 += g;
    h7 += h;
  }
  const out = new Uint8Array(32);
  const hs: StaticArray<u32> = [h0, h1, h2, h3, h4, h5, h6, h7];
  for (let i = 0; i < 8; i++) {
    out[i * 4] = <u8>(hs[i] >>> 24);
    out[i * 4 + 1] = <u8>(hs[i] >>> 16);
    out[i * 4 + 2] = <u8>(hs[i] >>> 8);
    out[i * 4 + 3] = <u8>hs[i];
  }
  return out;
}

function rotr(x: u32, n: u32): u32 {
  return (x >>> n) | (x << (32 - n));
}

const hexDigits = "0123456789abcdef";

/** hex is b in lowercase hexadecimal, as Go's hex.EncodeToString writes it. */
export function hex(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) s += hexDigits.charAt(b[i] >> 4) + hexDigits.charAt(b[i] & 15);
  return s;
}
