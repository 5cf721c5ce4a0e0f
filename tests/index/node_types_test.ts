import { deepEqual, equal, ok } from "node:assert/strict";
import { parserFor } from "../../src/index/_grammars.ts";
import type { Node } from "../../src/index/_grammars.ts";
import { languageOf } from "../../src/index/_languages.ts";

// One source per grammar with each construct the chunker reads, amid many other node types.
const SOURCES: Record<string, string> = {
  "a.ts": `import { readFile } from "node:fs";
import D, * as ns from "./x.ts";
export { y } from "./y.ts";
export function add(a: number): number { return helper(a) + ns.f(); }
function* gen() { yield 1; }
export const double = (n: number): number => add(n, n);
var legacy = function () { return [1, { a: 2 }]; }, other = 3;
export abstract class Square extends Shape implements Area {
  constructor(private side: number) { super(); }
  onClick = () => this.area();
  area(): number { return this.scale(this.side) * readFile(); }
}
export interface Area extends Base { area(): number; }
`,
  "a.tsx": `import React from "react";
export default function App() { return <div>{render()}</div>; }
export const Other = () => <App />;
class Box extends React.Component implements Sized { size = function () { return 1; }; }
interface Sized {}
`,
  "a.js": `import { x } from "./x.js";
export * from "./y.js";
const fs = require("fs");
function* gen() { yield 1; }
function top() { return fs.readFileSync(gen()); }
let arrow = () => top(), plain = 1;
class Cat extends mixin(Animal) { meow() { return this.purr(); } hiss = () => this.meow(); }
`,
  "a.py": `import os, json as j
from .util import thing as t
@dataclass
class Dog(Base, metaclass=Meta):
    """A dog."""
    def bark(self, n):
        return self.sound() * n
def helper():
    return [x for x in os.listdir() if x]
`,
  "a.go": `package main
import ("fmt"; "os")
type Shape interface { Area() float64; fmt.Stringer }
type (
  Point struct { X, Y int }
  Alias = Point
)
func (p *Point) Area() float64 { return helper(p.X) }
func helper(n int) float64 { fmt.Println(os.Args); return float64(n) }
`,
  "A.java": `package a;
import java.util.List;
import static a.B.c;
public class Dog extends Animal implements Pet, Named {
  public Dog() { super(); }
  void bark(int n) { helper(n); this.sound(); }
  record R(int x) {}
  enum E { A }
}
interface Pet extends Named { void pet(); }
`,
  "a.rs": `use std::collections::HashMap;
/// A point.
#[derive(Debug)]
pub struct Point { x: i32 }
enum E { A }
union U { a: u32 }
pub trait Shape: Debug + Clone { fn area(&self) -> f64; }
impl Shape for Point { fn area(&self) -> f64 { helper(self.x); Self::twice(1) } }
fn helper(n: i32) -> f64 { HashMap::new(); n as f64 }
`,
  "a.cs": `using System.Text;
namespace A {
  public class Dog : Animal, IPet {
    public Dog() { }
    public void Bark(int n) { Helper(n); Console.WriteLine(n); }
  }
  struct S { } record R(int X); enum E { A }
  interface IPet : INamed { void Pet(); }
}
`,
  "a.rb": `require "json"
require_relative "base"
class Dog < Animal
  include Pet
  def bark(n)
    helper(n)
    self.sound
  end
  def self.make; end
end
module Pet
end
`,
  "a.cpp": `#include <vector>
#include "shape.h"
namespace geo {
class Square : public Shape, private virtual Named {
 public:
  int area() const { return scale(side); }
};
int Square::scale(int n) { return helper(n); }
template <typename T> T twice(T x) { return x + x; }
typedef struct { int x; } point;
union U { int a; };
int *make(void) { return 0; }
}
`,
  "a.php": `<?php
namespace App;
use App\\Models\\User;
require_once 'lib.php';
include "x.php";
class Repo extends Base implements Countable {
    public function count(): int { return $this->size() + helper() + self::zero(); }
}
interface Named extends Base {}
trait Loud { function shout() {} }
enum Suit { case Hearts; }
function helper() { return strlen("x"); }
`,
  "a.sh": `#!/bin/bash
source ./lib.sh
. "other.sh"
greet() {
  echo hi
  helper "$1" | grep x
}
function helper { ls; }
`,
};

function* nodesOf(root: Node): Generator<Node> {
  const stack = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    yield node;
    for (const child of node.children) if (child) stack.push(child);
  }
}

Deno.test("LanguageSpec.nodeTypes lists every node type its functions react to", async () => {
  for (const [path, source] of Object.entries(SOURCES)) {
    const spec = languageOf(path);
    ok(spec, path);
    const tree = (await parserFor(spec.grammar)).parse(source);
    ok(tree, path);
    const listed = new Set(spec.nodeTypes);
    const seen = new Set<string>();
    try {
      for (const node of nodesOf(tree.rootNode)) {
        if (listed.has(node.type)) {
          seen.add(node.type);
          continue;
        }
        const where = `${path}: ${node.type} "${node.text.slice(0, 40)}"`;
        equal(spec.declaration(node), undefined, where);
        deepEqual(spec.imports(node), [], where);
        deepEqual(spec.bindings?.(node) ?? [], [], where);
        equal(spec.callee(node), undefined, where);
        equal(spec.scope?.(node), undefined, where);
      }
    } finally {
      tree.delete();
    }
    // The sources hold most of the listed types, so the check above saw the others around them.
    ok(seen.size >= listed.size / 2, `${path}: only ${[...seen].join(", ")}`);
  }
});
