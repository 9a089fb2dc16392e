// SHA-256 (FIPS 180-4), for the onboarding example's user ids: the same ids as the Go example,
// which hashes the e-mail address with crypto/sha256.

const K: u32[] = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

// sha256 returns the 32-byte digest of data.
export function sha256(data: Uint8Array): Uint8Array {
  const n = data.length;
  // The message, a 0x80 byte, zeros, and the bit length in 8 bytes, to a multiple of 64.
  const padded = new Uint8Array(((n + 9 + 63) >> 6) << 6);
  for (let i = 0; i < n; i++) padded[i] = data[i];
  padded[n] = 0x80;
  const bits = <u64>n << 3;
  for (let i = 0; i < 8; i++) padded[padded.length - 1 - i] = <u8>(bits >> (<u64>(8 * i)));

  const h: u32[] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const w = new Array<u32>(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let t = 0; t < 16; t++) {
      const j = block + 4 * t;
      w[t] = (<u32>padded[j] << 24) | (<u32>padded[j + 1] << 16) | (<u32>padded[j + 2] << 8) | <u32>padded[j + 3];
    }
    for (let t = 16; t < 64; t++) {
      const s0 = rotr<u32>(w[t - 15], 7) ^ rotr<u32>(w[t - 15], 18) ^ (w[t - 15] >>> 3);
      const s1 = rotr<u32>(w[t - 2], 17) ^ rotr<u32>(w[t - 2], 19) ^ (w[t - 2] >>> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (let t = 0; t < 64; t++) {
      const s1 = rotr<u32>(e, 6) ^ rotr<u32>(e, 11) ^ rotr<u32>(e, 25);
      const ch = (e & f) ^ (~e & g);
      const t1 = k + s1 + ch + K[t] + w[t];
      const s0 = rotr<u32>(a, 2) ^ rotr<u32>(a, 13) ^ rotr<u32>(a, 22);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = s0 + maj;
      k = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    out[4 * i] = <u8>(h[i] >>> 24);
    out[4 * i + 1] = <u8>(h[i] >>> 16);
    out[4 * i + 2] = <u8>(h[i] >>> 8);
    out[4 * i + 3] = <u8>h[i];
  }
  return out;
}

const DIGITS = "0123456789abcdef";

// hex writes the first n bytes of b in lower-case hexadecimal.
export function hex(b: Uint8Array, n: i32): string {
  let s = "";
  for (let i = 0; i < n; i++) s += DIGITS.charAt(b[i] >> 4) + DIGITS.charAt(b[i] & 15);
  return s;
}
