/**
 * The chunker's reading of C# and Ruby syntax trees (see `_languages.ts` for the contract).
 */
import { field, type Heritage, type LanguageSpec, named } from "./_language_spec.ts";

/** C#: a base list does not say which base is a class; by convention `IName` is an interface. */
export const csharp: LanguageSpec = {
  grammar: "c-sharp",
  nodeTypes: [
    "class_declaration",
    "struct_declaration",
    "record_declaration",
    "enum_declaration",
    "interface_declaration",
    "method_declaration",
    "constructor_declaration",
    "using_directive",
    "invocation_expression",
  ],
  declaration(node) {
    const name = field(node, "name");
    const body = node.childForFieldName("body");
    switch (node.type) {
      case "class_declaration":
      case "struct_declaration":
      case "record_declaration":
      case "enum_declaration":
        return { kind: "CLASS", name, node, body };
      case "interface_declaration":
        return { kind: "INTERFACE", name, node, body };
      case "method_declaration":
      case "constructor_declaration":
        return { kind: "FUNCTION", name, node, body };
    }
    return undefined;
  },
  heritage(node) {
    const bases = named(named(node).find((child) => child.type === "base_list"));
    const isInterface = node.type === "interface_declaration";
    return bases.map((base) => ({
      kind: !isInterface && /^I[A-Z]/.test(base.text) ? "IMPLEMENTS" : "EXTENDS",
      name: base.text,
    }));
  },
  imports(node) {
    if (node.type !== "using_directive") return [];
    const names = named(node);
    return names.length ? [names[names.length - 1].text] : [];
  },
  callee: (node) =>
    node.type === "invocation_expression" ? node.childForFieldName("function")?.text : undefined,
};

const RUBY_REQUIRES = new Set(["require", "require_relative", "load"]);
const RUBY_MIXINS = new Set(["include", "extend", "prepend"]);

/** Ruby: modules count as classes; `include`/`extend`/`prepend` of a module as implementing it. */
export const ruby: LanguageSpec = {
  grammar: "ruby",
  nodeTypes: ["class", "module", "method", "singleton_method", "call"],
  declaration(node) {
    const name = field(node, "name");
    const body = node.childForFieldName("body");
    switch (node.type) {
      case "class":
      case "module":
        return { kind: "CLASS", name, node, body };
      case "method":
      case "singleton_method":
        return { kind: "FUNCTION", name, node, body };
    }
    return undefined;
  },
  heritage(node) {
    const out: Heritage[] = [];
    const superclass = node.childForFieldName("superclass");
    if (superclass) out.push({ kind: "EXTENDS", name: superclass.text.replace(/^<\s*/, "") });
    for (const statement of named(node.childForFieldName("body"))) {
      if (statement.type !== "call" || !RUBY_MIXINS.has(field(statement, "method"))) continue;
      for (const argument of named(statement.childForFieldName("arguments"))) {
        out.push({ kind: "IMPLEMENTS", name: argument.text });
      }
    }
    return out;
  },
  imports(node) {
    if (node.type !== "call" || !RUBY_REQUIRES.has(field(node, "method"))) return [];
    const first = node.childForFieldName("arguments")?.namedChild(0);
    return first?.type === "string" ? [first.text.replace(/^["']|["']$/g, "")] : [];
  },
  callee(node) {
    if (node.type !== "call") return undefined;
    const receiver = node.childForFieldName("receiver");
    const method = field(node, "method");
    return receiver ? `${receiver.text}.${method}` : method;
  },
};
