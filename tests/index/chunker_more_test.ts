import { deepEqual, equal } from "node:assert/strict";
import { chunkFile } from "../../src/index/chunker.ts";
import type { ChunkedFile } from "../../src/index/types.ts";

/** Chunks as `KIND symbol start-end`, in order. */
function chunks(file: ChunkedFile): string[] {
  return file.chunks.map((chunk) =>
    `${chunk.kind} ${chunk.symbol} ${chunk.startLine}-${chunk.endLine}`
  );
}

/** Relations as `KIND from -> to name`, chunk ids shortened to their symbol ("?" unresolved). */
function relations(file: ChunkedFile, kind: string): string[] {
  const symbol = (id: string | undefined) =>
    id === undefined ? "?" : file.chunks.find((chunk) => chunk.id === id)?.symbol ?? `!${id}`;
  return file.relations.filter((relation) => relation.kind === kind)
    .map((relation) =>
      `${relation.kind} ${symbol(relation.from)} -> ${symbol(relation.to)} ${relation.name}`
    );
}

function chunk(file: ChunkedFile, symbol: string) {
  const found = file.chunks.find((chunk) => chunk.symbol === symbol);
  if (!found) throw new Error(`No chunk "${symbol}" in ${chunks(file).join(", ")}`);
  return found;
}

Deno.test("chunkFile() cuts C++: classes, inline and out-of-line methods, templates, includes", async () => {
  const file = await chunkFile(
    "src/shape.cpp",
    `#include <vector>
#include "shape.h"
namespace geo {
/// A square.
class Square : public Shape, private Named {
 public:
  int area() const { return scale(side); }
  int scale(int n);
};
int Square::scale(int n) { return helper(n); }
template <typename T>
T twice(T x) { return x + x; }
}
static int helper(int n) { return n; }
`,
  );
  equal(file.language, "cpp");
  deepEqual(chunks(file), [
    "FILE shape.cpp 1-14",
    "CLASS Square 5-9",
    "METHOD Square.area 7-7",
    "METHOD Square.scale 10-10",
    "FUNCTION twice 11-12",
    "FUNCTION helper 14-14",
  ]);
  equal(chunk(file, "Square").doc, "A square.");
  equal(chunk(file, "Square").signature, "class Square : public Shape, private Named");
  equal(chunk(file, "Square.scale").signature, "int Square::scale(int n)");
  deepEqual(relations(file, "IMPORTS"), [
    "IMPORTS shape.cpp -> ? vector",
    "IMPORTS shape.cpp -> ? shape.h",
  ]);
  deepEqual(relations(file, "EXTENDS"), [
    "EXTENDS Square -> ? Shape",
    "EXTENDS Square -> ? Named",
  ]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Square.area -> Square.scale scale",
    "CALLS Square.scale -> helper helper",
  ]);
});

Deno.test("chunkFile() cuts C with the C++ grammar: functions, pointer returns, typedef structs", async () => {
  const file = await chunkFile(
    "lib/list.c",
    `#include "list.h"
/* Adds two numbers. */
int add(int a, int b) { return helper(a) + b; }
struct node *make(void) { return 0; }
typedef struct { int x; } Point;
struct node { struct node *next; };
`,
  );
  deepEqual(chunks(file), [
    "FILE list.c 1-6",
    "FUNCTION add 3-3",
    "FUNCTION make 4-4",
    "CLASS Point 5-5",
    "CLASS node 6-6",
  ]);
  equal(chunk(file, "add").doc, "Adds two numbers.");
  equal(chunk(file, "make").signature, "struct node *make(void)");
  deepEqual(relations(file, "CALLS"), ["CALLS add -> ? helper"]);
});

Deno.test("chunkFile() cuts PHP: classes, traits, interfaces, methods, uses and includes", async () => {
  const file = await chunkFile(
    "src/Repo.php",
    `<?php
namespace App;
use App\\Models\\User;
require_once 'lib.php';
/** A repository. */
class Repo extends Base implements Countable, Named {
    /** Counts. */
    public function count(): int { return $this->size() + helper() + self::zero(); }
    private function size() { return User::all(); }
    static function zero() { return 0; }
}
interface Named extends Base {}
trait Loud { function shout() {} }
function helper() { return strlen("x"); }
`,
  );
  equal(file.language, "php");
  deepEqual(chunks(file), [
    "FILE Repo.php 1-14",
    "CLASS Repo 6-11",
    "METHOD Repo.count 8-8",
    "METHOD Repo.size 9-9",
    "METHOD Repo.zero 10-10",
    "INTERFACE Named 12-12",
    "CLASS Loud 13-13",
    "METHOD Loud.shout 13-13",
    "FUNCTION helper 14-14",
  ]);
  equal(chunk(file, "Repo").doc, "A repository.");
  equal(chunk(file, "Repo.count").doc, "Counts.");
  equal(chunk(file, "Repo.count").signature, "public function count(): int");
  deepEqual(relations(file, "IMPORTS"), [
    "IMPORTS Repo.php -> ? App\\Models\\User",
    "IMPORTS Repo.php -> ? lib.php",
  ]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Repo -> ? Base", "EXTENDS Named -> ? Base"]);
  deepEqual(relations(file, "IMPLEMENTS"), [
    "IMPLEMENTS Repo -> ? Countable",
    "IMPLEMENTS Repo -> Named Named",
  ]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Repo.count -> Repo.size this.size",
    "CALLS Repo.count -> helper helper",
    "CALLS Repo.count -> Repo.zero this.zero",
    "CALLS Repo.size -> ? User::all",
    "CALLS helper -> ? strlen",
  ]);
});

Deno.test("chunkFile() cuts Bash: functions in both forms, sourced files, commands as calls", async () => {
  const file = await chunkFile(
    "scripts/run.sh",
    `#!/bin/bash
source ./lib.sh
. "other.sh"

# Greets someone.
greet() {
  echo hi
  helper "$1"
}
function helper {
  ls
}
`,
  );
  equal(file.language, "bash");
  deepEqual(chunks(file), [
    "FILE run.sh 1-12",
    "FUNCTION greet 6-9",
    "FUNCTION helper 10-12",
  ]);
  equal(chunk(file, "greet").doc, "Greets someone.");
  equal(chunk(file, "greet").signature, "greet()");
  deepEqual(relations(file, "IMPORTS"), [
    "IMPORTS run.sh -> ? ./lib.sh",
    "IMPORTS run.sh -> ? other.sh",
  ]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS greet -> ? echo",
    "CALLS greet -> helper helper",
    "CALLS helper -> ? ls",
  ]);
});
