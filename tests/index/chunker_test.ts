import { deepEqual, equal, match } from "node:assert/strict";
import { chunkFile } from "../../src/index/chunker.ts";
import type { ChunkedFile } from "../../src/index/types.ts";

/** Chunks as `KIND symbol start-end`, in order. */
function chunks(file: ChunkedFile): string[] {
  return file.chunks.map((chunk) =>
    `${chunk.kind} ${chunk.symbol} ${chunk.startLine}-${chunk.endLine}`
  );
}

/** Relations as `KIND from -> to name`, with chunk ids shortened to their symbol ("?" unresolved). */
function relations(file: ChunkedFile, kind?: string): string[] {
  const symbol = (id: string | undefined) =>
    id === undefined ? "?" : file.chunks.find((chunk) => chunk.id === id)?.symbol ?? `!${id}`;
  return file.relations.filter((relation) => !kind || relation.kind === kind)
    .map((relation) =>
      `${relation.kind} ${symbol(relation.from)} -> ${symbol(relation.to)} ${relation.name}`
    );
}

function chunk(file: ChunkedFile, symbol: string) {
  const found = file.chunks.find((chunk) => chunk.symbol === symbol);
  if (!found) throw new Error(`No chunk "${symbol}" in ${chunks(file).join(", ")}`);
  return found;
}

const TS = `import { readFile } from "node:fs";
import type { X } from "./x.ts";

/** Adds two numbers. */
export function add(a: number, b: number): number {
  return helper(a) + b;
}

function helper(a: number) { return a; }

// Doubles.
export const double = (n: number): number => add(n, n);

/**
 * A shape.
 */
export class Square extends Shape implements Area, Named {
  constructor(private side: number) { super(); }
  /** The area. */
  area(): number {
    return this.scale(this.side) * readFile();
  }
  scale(n: number) { return n; }
}

export interface Area extends Base {
  area(): number;
}
`;

Deno.test("chunkFile() cuts TypeScript into a file, functions, a class, its methods and an interface", async () => {
  const file = await chunkFile("src/a.ts", TS);
  equal(file.language, "typescript");
  deepEqual(chunks(file), [
    "FILE a.ts 1-28",
    "FUNCTION add 5-7",
    "FUNCTION helper 9-9",
    "FUNCTION double 12-12",
    "CLASS Square 17-24",
    "METHOD Square.constructor 18-18",
    "METHOD Square.area 20-22",
    "METHOD Square.scale 23-23",
    "INTERFACE Area 26-28",
  ]);
  const add = chunk(file, "add");
  equal(add.id, "src/a.ts#FUNCTION:add:5");
  equal(add.parent, "src/a.ts#FILE:a.ts:1");
  equal(add.signature, "function add(a: number, b: number): number");
  equal(add.doc, "Adds two numbers.");
  equal(add.text, TS.split("\n").slice(4, 7).join("\n"));
  equal(chunk(file, "double").signature, "const double = (n: number): number =>");
  equal(chunk(file, "double").doc, "Doubles.");
  equal(chunk(file, "Square").doc, "A shape.");
  equal(chunk(file, "Square").signature, "class Square extends Shape implements Area, Named");
  equal(chunk(file, "Square.area").doc, "The area.");
  equal(chunk(file, "Square.area").parent, chunk(file, "Square").id);
  equal(chunk(file, "helper").doc, "");
  equal(chunk(file, "a.ts").text, TS);
});

Deno.test("chunkFile() relates TypeScript chunks: contains, imports, extends, implements, calls", async () => {
  const file = await chunkFile("src/a.ts", TS);
  deepEqual(relations(file, "IMPORTS"), ["IMPORTS a.ts -> ? node:fs", "IMPORTS a.ts -> ? ./x.ts"]);
  deepEqual(relations(file, "CONTAINS"), [
    "CONTAINS a.ts -> add add",
    "CONTAINS a.ts -> helper helper",
    "CONTAINS a.ts -> double double",
    "CONTAINS a.ts -> Square Square",
    "CONTAINS Square -> Square.constructor Square.constructor",
    "CONTAINS Square -> Square.area Square.area",
    "CONTAINS Square -> Square.scale Square.scale",
    "CONTAINS a.ts -> Area Area",
  ]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Square -> ? Shape", "EXTENDS Area -> ? Base"]);
  deepEqual(relations(file, "IMPLEMENTS"), [
    "IMPLEMENTS Square -> Area Area",
    "IMPLEMENTS Square -> ? Named",
  ]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS add -> helper helper",
    "CALLS double -> add add",
    "CALLS Square.constructor -> ? super",
    "CALLS Square.area -> Square.scale this.scale",
    "CALLS Square.area -> ? readFile",
  ]);
});

Deno.test("chunkFile() reads TSX and JavaScript with their own grammars", async () => {
  const tsx = await chunkFile(
    "ui/app.tsx",
    `import React from "react";\n\nexport const App = () => <div>{render()}</div>;\n`,
  );
  equal(tsx.language, "tsx");
  deepEqual(chunks(tsx), ["FILE app.tsx 1-3", "FUNCTION App 3-3"]);
  deepEqual(relations(tsx, "CALLS"), ["CALLS App -> ? render"]);
  const js = await chunkFile(
    "lib/b.js",
    `const fs = require("fs");\n// A cat.\nclass Cat extends mixin(Animal) {\n  meow() { return this.purr(); }\n  purr() {}\n  hiss = () => this.meow();\n}\n`,
  );
  equal(js.language, "javascript");
  deepEqual(chunks(js), [
    "FILE b.js 1-7",
    "CLASS Cat 3-7",
    "METHOD Cat.meow 4-4",
    "METHOD Cat.purr 5-5",
    "METHOD Cat.hiss 6-6",
  ]);
  equal(chunk(js, "Cat").doc, "A cat.");
  deepEqual(relations(js, "EXTENDS"), ["EXTENDS Cat -> ? mixin(Animal)"]);
  deepEqual(relations(js, "CALLS"), [
    "CALLS Cat.meow -> Cat.purr this.purr",
    "CALLS Cat.hiss -> Cat.meow this.meow",
  ]);
});

const PY = `import os, json as j
from .util import thing as t

class Base: pass

@dataclass
class Dog(Base, metaclass=Meta):
    """A dog.

    Barks."""

    def bark(self, n):  # not a doc
        return self.sound() * n

    def sound(self):
        return helper()

# Helps.
# Twice.
def helper():
    return os.getcwd()
`;

Deno.test("chunkFile() cuts Python: decorated classes, methods, docstrings, comments above", async () => {
  const file = await chunkFile("pkg/dog.py", PY);
  equal(file.language, "python");
  deepEqual(chunks(file), [
    "FILE dog.py 1-21",
    "CLASS Base 4-4",
    "CLASS Dog 6-16",
    "METHOD Dog.bark 12-13",
    "METHOD Dog.sound 15-16",
    "FUNCTION helper 20-21",
  ]);
  equal(chunk(file, "Dog").doc, "A dog.\n\nBarks.");
  equal(chunk(file, "Dog").signature, "class Dog(Base, metaclass=Meta):");
  equal(chunk(file, "Dog.bark").signature, "def bark(self, n):");
  equal(chunk(file, "Dog.bark").doc, "");
  equal(chunk(file, "helper").doc, "Helps.\nTwice.");
  deepEqual(relations(file, "IMPORTS"), [
    "IMPORTS dog.py -> ? os",
    "IMPORTS dog.py -> ? json",
    "IMPORTS dog.py -> ? .util",
  ]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Dog -> Base Base"]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Dog.bark -> Dog.sound self.sound",
    "CALLS Dog.sound -> helper helper",
    "CALLS helper -> ? os.getcwd",
  ]);
});

const GO = `package main

import (
\t"fmt"
\tstr "strings"
)

// Point is a point.
type Point struct {
\tX int
}

type Shape interface {
\tfmt.Stringer
\tArea() int
}

// Area computes.
func (p *Point) Area() int {
\treturn helper(p.X)
}

func helper(x int) int { fmt.Println(x); return x }
`;

Deno.test("chunkFile() cuts Go: structs, interfaces, functions and receiver methods", async () => {
  const file = await chunkFile("cmd/main.go", GO);
  equal(file.language, "go");
  deepEqual(chunks(file), [
    "FILE main.go 1-23",
    "CLASS Point 9-11",
    "INTERFACE Shape 13-16",
    "METHOD Point.Area 19-21",
    "FUNCTION helper 23-23",
  ]);
  equal(chunk(file, "Point").signature, "type Point struct");
  equal(chunk(file, "Point").doc, "Point is a point.");
  equal(chunk(file, "Point.Area").signature, "func (p *Point) Area() int");
  equal(chunk(file, "Point.Area").doc, "Area computes.");
  deepEqual(relations(file, "IMPORTS"), [
    "IMPORTS main.go -> ? fmt",
    "IMPORTS main.go -> ? strings",
  ]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Shape -> ? fmt.Stringer"]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Point.Area -> helper helper",
    "CALLS helper -> ? fmt.Println",
  ]);
});

const JAVA = `package a;
import java.util.List;
import static java.lang.Math.max;

/** A dog. */
public class Dog extends Animal implements Pet, Comparable<Dog> {
  /** Barks. */
  public void bark(int n) {
    helper(n);
    System.out.println(n);
  }
  private int helper(int n) { return n; }
}
interface Pet extends Named {}
`;

Deno.test("chunkFile() cuts Java: classes, interfaces, methods, imports and heritage", async () => {
  const file = await chunkFile("src/a/Dog.java", JAVA);
  equal(file.language, "java");
  deepEqual(chunks(file), [
    "FILE Dog.java 1-14",
    "CLASS Dog 6-13",
    "METHOD Dog.bark 8-11",
    "METHOD Dog.helper 12-12",
    "INTERFACE Pet 14-14",
  ]);
  equal(chunk(file, "Dog.bark").signature, "public void bark(int n)");
  equal(chunk(file, "Dog.bark").doc, "Barks.");
  equal(chunk(file, "Dog").doc, "A dog.");
  deepEqual(relations(file, "IMPORTS"), [
    "IMPORTS Dog.java -> ? java.util.List",
    "IMPORTS Dog.java -> ? java.lang.Math.max",
  ]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Dog -> ? Animal", "EXTENDS Pet -> ? Named"]);
  deepEqual(relations(file, "IMPLEMENTS"), [
    "IMPLEMENTS Dog -> Pet Pet",
    "IMPLEMENTS Dog -> ? Comparable<Dog>",
  ]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Dog.bark -> Dog.helper helper",
    "CALLS Dog.bark -> ? System.out.println",
  ]);
});

const RUST = `use std::collections::HashMap;

/// A point.
#[derive(Debug)]
pub struct Point { x: i32 }

pub trait Area: Named {
    fn area(&self) -> i32;
}

impl Area for Point {
    /// The area.
    fn area(&self) -> i32 {
        self.double() + helper()
    }
}

impl Point {
    fn double(&self) -> i32 { Self::helper2() }
    fn helper2() -> i32 { 2 }
}

fn helper() -> i32 { 1 }
`;

Deno.test("chunkFile() cuts Rust: structs, traits, impl methods, doc comments past attributes", async () => {
  const file = await chunkFile("src/point.rs", RUST);
  equal(file.language, "rust");
  deepEqual(chunks(file), [
    "FILE point.rs 1-23",
    "CLASS Point 5-5",
    "INTERFACE Area 7-9",
    "METHOD Point.area 13-15",
    "METHOD Point.double 19-19",
    "METHOD Point.helper2 20-20",
    "FUNCTION helper 23-23",
  ]);
  equal(chunk(file, "Point").doc, "A point.");
  equal(chunk(file, "Point").signature, "pub struct Point");
  equal(chunk(file, "Point.area").doc, "The area.");
  equal(chunk(file, "Point.area").signature, "fn area(&self) -> i32");
  deepEqual(relations(file, "IMPORTS"), ["IMPORTS point.rs -> ? std::collections::HashMap"]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Area -> ? Named"]);
  deepEqual(relations(file, "IMPLEMENTS"), ["IMPLEMENTS Point -> Area Area"]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Point.area -> Point.double self.double",
    "CALLS Point.area -> helper helper",
    "CALLS Point.double -> Point.helper2 Self::helper2",
  ]);
});

Deno.test("chunkFile() keeps what it recovers from source that does not parse", async () => {
  const file = await chunkFile(
    "broken.py",
    "def good():\n    return 1\n\ndef bad(:\n    ((( [\n",
  );
  equal(file.language, "python");
  equal(file.chunks[0].kind, "FILE");
  equal(file.chunks[0].endLine, 5);
  deepEqual(chunks(file).slice(0, 2), ["FILE broken.py 1-5", "FUNCTION good 1-2"]);
  const garbage = await chunkFile("junk.ts", "class { function ((( \n}}}} export ) =>\n");
  deepEqual(chunks(garbage).slice(0, 1), ["FILE junk.ts 1-2"]);
});

Deno.test("chunkFile() survives source nested deeper than the call stack", async () => {
  const deep = `const x = ${"[".repeat(30_000)}${"]".repeat(30_000)};\nfunction after() {}\n`;
  const file = await chunkFile("deep.js", deep);
  deepEqual(chunks(file), ["FILE deep.js 1-2", "FUNCTION after 2-2"]);
});

Deno.test("chunkFile() records calls of names, not of expressions", async () => {
  const file = await chunkFile(
    "calls.ts",
    "function run() {\n  (function () { inner(); })();\n  table[key]();\n  a?.b();\n  Ünï.çode();\n}\n",
  );
  deepEqual(relations(file, "CALLS"), [
    "CALLS run -> ? inner",
    "CALLS run -> ? a?.b",
    "CALLS run -> ? Ünï.çode",
  ]);
});

Deno.test("chunkFile() cuts other text into overlapping windows of lines", async () => {
  const lines = Array.from({ length: 130 }, (_, i) => `line ${i + 1}`);
  const file = await chunkFile("docs/notes.md", lines.join("\n") + "\n");
  equal(file.language, "text");
  deepEqual(relations(file), []);
  deepEqual(chunks(file), [
    "WINDOW notes.md 1-60",
    "WINDOW notes.md 51-110",
    "WINDOW notes.md 101-130",
  ]);
  equal(file.chunks[1].text, lines.slice(50, 110).join("\n"));
  equal(file.chunks[1].id, "docs/notes.md#WINDOW:notes.md:51");
  equal(file.chunks[1].parent, undefined);
  deepEqual((await chunkFile("empty.txt", "")).chunks, []);
});

Deno.test("chunkFile() gives binary content no chunks and says so in its language", async () => {
  const file = await chunkFile("logo.ts", "PNG\0\0binary");
  equal(file.language, "binary");
  deepEqual(file.chunks, []);
  deepEqual(file.relations, []);
});

Deno.test("chunkFile() hashes the text with sha-256 and caps chunk text", async () => {
  const file = await chunkFile("a.txt", "abc");
  equal(file.hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const long = `export function big() {\n${"  x();\n".repeat(2_000)}}\n`;
  const big = await chunkFile("big.ts", long);
  equal(chunk(big, "big").endLine, 2_002);
  equal(chunk(big, "big").text.length, 4_000);
  match(chunk(big, "big").text, /^export function big\(\) \{/);
});

Deno.test("chunkFile() cuts C#: classes in namespaces, constructors, methods, base lists", async () => {
  const file = await chunkFile(
    "src/Dog.cs",
    `using System.Text;
namespace A {
  /// <summary>A dog.</summary>
  public class Dog : Animal, IPet {
    public Dog() { }
    public void Bark(int n) { Helper(n); Console.WriteLine(n); }
    void Helper(int n) { }
  }
  interface IPet : INamed { void Pet(); }
}
`,
  );
  equal(file.language, "c-sharp");
  deepEqual(chunks(file), [
    "FILE Dog.cs 1-10",
    "CLASS Dog 4-8",
    "METHOD Dog.Dog 5-5",
    "METHOD Dog.Bark 6-6",
    "METHOD Dog.Helper 7-7",
    "INTERFACE IPet 9-9",
    "METHOD IPet.Pet 9-9",
  ]);
  equal(chunk(file, "Dog").doc, "A dog.");
  equal(chunk(file, "Dog.Bark").signature, "public void Bark(int n)");
  deepEqual(relations(file, "IMPORTS"), ["IMPORTS Dog.cs -> ? System.Text"]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Dog -> ? Animal", "EXTENDS IPet -> ? INamed"]);
  deepEqual(relations(file, "IMPLEMENTS"), ["IMPLEMENTS Dog -> IPet IPet"]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Dog.Bark -> Dog.Helper Helper",
    "CALLS Dog.Bark -> ? Console.WriteLine",
  ]);
});

Deno.test("chunkFile() cuts Ruby: classes, modules, methods, requires and mixins", async () => {
  const file = await chunkFile(
    "lib/dog.rb",
    `require "json"
require_relative "base"

# A dog.
class Dog < Animal
  include Pet
  def bark(n)
    helper(n)
    self.sound
  end
  def sound; end
end
module Pet
end
`,
  );
  equal(file.language, "ruby");
  deepEqual(chunks(file), [
    "FILE dog.rb 1-14",
    "CLASS Dog 5-12",
    "METHOD Dog.bark 7-10",
    "METHOD Dog.sound 11-11",
    "CLASS Pet 13-14",
  ]);
  equal(chunk(file, "Dog").doc, "A dog.");
  equal(chunk(file, "Dog").signature, "class Dog < Animal");
  equal(chunk(file, "Dog.bark").signature, "def bark(n)");
  deepEqual(relations(file, "IMPORTS"), ["IMPORTS dog.rb -> ? json", "IMPORTS dog.rb -> ? base"]);
  deepEqual(relations(file, "EXTENDS"), ["EXTENDS Dog -> ? Animal"]);
  deepEqual(relations(file, "IMPLEMENTS"), ["IMPLEMENTS Dog -> Pet Pet"]);
  deepEqual(relations(file, "CALLS"), [
    "CALLS Dog.bark -> ? helper",
    "CALLS Dog.bark -> Dog.sound self.sound",
  ]);
});
