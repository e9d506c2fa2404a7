// Just enough of pprof's profile.proto to check a file dapprof wrote: gunzipped, its sample
// types, samples (their stacks through locations to functions) and string table read by
// protobuf's wire format, so that the test checks the
// file any pprof reader gets, not what the writer meant to write.

import { gunzipSync } from 'node:zlib';

export interface Pprof {
  /** "type/unit" of each value of a sample, in order. */
  sampleTypes: string[];
  /** Each sample's values (as many as sampleTypes) and the functions of its locations, innermost first. */
  samples: Array<{ values: number[]; functions: string[] }>;
  strings: string[];
}

type Field = { field: number; wire: number; int: number; bytes: Buffer };

function varint(buf: Buffer, at: number): [number, number] {
  let value = 0n;
  for (let shift = 0n; ; shift += 7n) {
    if (at >= buf.length) throw new Error('truncated varint');
    const b = buf[at++];
    value |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [Number(BigInt.asIntN(64, value)), at];
  }
}

/** The fields of one message; fixed-width fields (which profile.proto has none of) are skipped. */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  for (let at = 0; at < buf.length; ) {
    let key: number;
    [key, at] = varint(buf, at);
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      let int: number;
      [int, at] = varint(buf, at);
      out.push({ field, wire, int, bytes: Buffer.alloc(0) });
    } else if (wire === 2) {
      let length: number;
      [length, at] = varint(buf, at);
      if (at + length > buf.length) throw new Error(`field ${field} runs past the message`);
      out.push({ field, wire, int: 0, bytes: buf.subarray(at, at + length) });
      at += length;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
    } else {
      throw new Error(`wire type ${wire} of field ${field}`);
    }
  }
  return out;
}

/** A repeated integer field, packed (proto3's default) or not. */
function ints(all: Field[], field: number): number[] {
  const out: number[] = [];
  for (const f of all.filter((x) => x.field === field)) {
    if (f.wire === 0) out.push(f.int);
    else for (let at = 0, v = 0; at < f.bytes.length; out.push(v)) [v, at] = varint(f.bytes, at);
  }
  return out;
}

/** Decodes a gzipped profile.proto; throws on anything that is not one. */
export function readPprof(gzipped: Buffer): Pprof {
  const top = fields(gunzipSync(gzipped));
  const strings = top.filter((f) => f.field === 6).map((f) => f.bytes.toString('utf8'));
  const str = (i: number) => {
    if (i < 0 || i >= strings.length) throw new Error(`string ${i} outside the table of ${strings.length}`);
    return strings[i];
  };
  const sampleTypes = top.filter((f) => f.field === 1).map((f) => {
    const vt = fields(f.bytes);
    return `${str(ints(vt, 1)[0] ?? 0)}/${str(ints(vt, 2)[0] ?? 0)}`;
  });
  // Function: id 1, name 2; location: id 1, line 4 (each line: function_id 1).
  const functions = new Map(top.filter((f) => f.field === 5).map((f) => [ints(fields(f.bytes), 1)[0], str(ints(fields(f.bytes), 2)[0] ?? 0)]));
  const locations = new Map(
    top.filter((f) => f.field === 4).map((f) => {
      const l = fields(f.bytes);
      const names = l.filter((x) => x.field === 4).map((line) => {
        const id = ints(fields(line.bytes), 1)[0];
        if (!functions.has(id)) throw new Error(`no function ${id}`);
        return functions.get(id)!;
      });
      return [ints(l, 1)[0], names];
    }),
  );
  const samples = top.filter((f) => f.field === 2).map((f) => {
    const s = fields(f.bytes);
    const names = ints(s, 1).flatMap((id) => {
      if (!locations.has(id)) throw new Error(`no location ${id}`);
      return locations.get(id)!;
    });
    return { functions: names, values: ints(s, 2) };
  });
  return { sampleTypes, samples, strings };
}
