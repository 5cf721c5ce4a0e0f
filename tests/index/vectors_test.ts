import { deepEqual, equal } from "node:assert/strict";
import { matrixOf, nearest, toBlob } from "../../src/index/_vectors.ts";

function rows(vectors: number[][]) {
  return vectors.map((vector, index) => ({
    seq: index + 100,
    vector: toBlob(Float32Array.from(vector)),
  }));
}

Deno.test("nearest() gives the cosine of each row and the best rows in order", () => {
  let seed = 7;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647 - 0.5;
  const vectors = Array.from({ length: 500 }, () => Array.from({ length: 8 }, random));
  const matrix = matrixOf(rows(vectors));
  const query = Float32Array.from({ length: 8 }, random);
  const { cosines, best } = nearest(matrix, query, 20);
  const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v));
  const expected = vectors.map((v) =>
    v.reduce((sum, x, i) => sum + x * query[i], 0) / (norm(v) * norm(query))
  );
  for (let i = 0; i < vectors.length; i++) equal(Math.abs(cosines[i] - expected[i]) < 1e-5, true);
  const order = expected.map((value, row) => ({ value, row })).sort((a, b) => b.value - a.value);
  deepEqual(best, order.slice(0, 20).map(({ row }) => row));
});

Deno.test("matrixOf() leaves out vectors of another length and nearest() a query of another", () => {
  // An empty row first (a file refreshed without an endpoint's vectors) sets nothing.
  const matrix = matrixOf(rows([[], [1, 0], [0, 1, 0], [0, 2]]));
  deepEqual(matrix.seqs, [101, 103]);
  equal(matrix.rowOf.get(103), 1);
  deepEqual(Array.from(nearest(matrix, Float32Array.from([0, 1]), 5).cosines), [0, 1]);
  deepEqual(nearest(matrix, Float32Array.from([0, 1, 0]), 5).best, []);
});
