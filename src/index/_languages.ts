/**
 * What the chunker needs to know about each language's syntax tree: which nodes declare a
 * class, interface or function, where their name and body are, and which nodes import, inherit
 * and call. Node types are tree-sitter's, from the grammars in @vscode/tree-sitter-wasm.
 */
import type { Node } from "./_grammars.ts";
import {
  type Binding,
  type Declaration,
  field,
  type Heritage,
  type LanguageSpec,
  named,
} from "./_language_spec.ts";
import { bash, cpp, php } from "./_languages_extra.ts";
import { csharp, ruby } from "./_languages_more.ts";

export type { Heritage, LanguageSpec };

function unquote(text: string): string {
  return text.replace(/^["'`]|["'`]$/g, "");
}

function calleeField(node: Node, type: string, name = "function"): string | undefined {
  return node.type === type ? node.childForFieldName(name)?.text : undefined;
}

const ECMA_FUNCTIONS = new Set(["arrow_function", "function_expression", "function"]);

function ecmaDeclaration(node: Node): Declaration | undefined {
  switch (node.type) {
    case "class_declaration":
    case "abstract_class_declaration":
      return {
        kind: "CLASS",
        name: field(node, "name"),
        node,
        body: node.childForFieldName("body"),
      };
    case "interface_declaration":
      return {
        kind: "INTERFACE",
        name: field(node, "name"),
        node,
        body: node.childForFieldName("body"),
      };
    case "function_declaration":
    case "generator_function_declaration":
    case "method_definition":
      return {
        kind: "FUNCTION",
        name: field(node, "name"),
        node,
        body: node.childForFieldName("body"),
      };
    case "public_field_definition":
    case "field_definition": {
      // A class field holding a function (`onClick = () => {…}`) is a method.
      const value = node.childForFieldName("value");
      if (!value || !ECMA_FUNCTIONS.has(value.type)) return undefined;
      const name = node.childForFieldName("name") ?? node.childForFieldName("property");
      return {
        kind: "FUNCTION",
        name: name?.text ?? "",
        node,
        body: value.childForFieldName("body"),
      };
    }
    case "lexical_declaration":
    case "variable_declaration": {
      const declarators = named(node).filter((child) => child.type === "variable_declarator");
      const value = declarators.length === 1 ? declarators[0].childForFieldName("value") : null;
      if (!value || !ECMA_FUNCTIONS.has(value.type)) return undefined;
      return {
        kind: "FUNCTION",
        name: field(declarators[0], "name"),
        node,
        body: value.childForFieldName("body"),
      };
    }
  }
  return undefined;
}

function ecmaHeritage(node: Node): Heritage[] {
  const out: Heritage[] = [];
  for (const child of named(node)) {
    if (child.type === "class_heritage") {
      for (const clause of named(child)) {
        if (clause.type === "extends_clause") {
          const value = clause.childForFieldName("value");
          if (value) out.push({ kind: "EXTENDS", name: value.text });
        } else if (clause.type === "implements_clause") {
          for (const type of named(clause)) out.push({ kind: "IMPLEMENTS", name: type.text });
        } else out.push({ kind: "EXTENDS", name: clause.text }); // JavaScript: the expression
      }
    } else if (child.type === "extends_type_clause") {
      for (const type of named(child)) out.push({ kind: "EXTENDS", name: type.text });
    }
  }
  return out;
}

/** `import D, { a as b } from "./x"` and `import * as ns from "./x"`: what each local name is. */
function ecmaBindings(node: Node): Binding[] {
  if (node.type !== "import_statement") return [];
  const module = unquote(field(node, "source"));
  const out: Binding[] = [];
  for (const clause of named(node).filter((child) => child.type === "import_clause")) {
    for (const part of named(clause)) {
      if (part.type === "identifier") out.push({ local: part.text, module, name: "default" });
      else if (part.type === "namespace_import") {
        const local = part.namedChild(0)?.text;
        if (local) out.push({ local, module, name: "*" });
      } else if (part.type === "named_imports") {
        for (const specifier of named(part).filter((s) => s.type === "import_specifier")) {
          const name = field(specifier, "name");
          out.push({ local: field(specifier, "alias") || name, module, name });
        }
      }
    }
  }
  return out;
}

function ecma(grammar: string): LanguageSpec {
  return {
    grammar,
    nodeTypes: [
      "class_declaration",
      "abstract_class_declaration",
      "interface_declaration",
      "function_declaration",
      "generator_function_declaration",
      "method_definition",
      "public_field_definition",
      "field_definition",
      "lexical_declaration",
      "variable_declaration",
      "import_statement",
      "export_statement",
      "call_expression",
    ],
    declaration: ecmaDeclaration,
    heritage: ecmaHeritage,
    imports(node) {
      if (node.type !== "import_statement" && node.type !== "export_statement") return [];
      const source = node.childForFieldName("source");
      return source ? [unquote(source.text)] : [];
    },
    bindings: ecmaBindings,
    callee: (node) => calleeField(node, "call_expression"),
  };
}

const python: LanguageSpec = {
  grammar: "python",
  nodeTypes: [
    "class_definition",
    "function_definition",
    "import_from_statement",
    "import_statement",
    "call",
  ],
  declaration(node) {
    if (node.type === "class_definition") {
      return {
        kind: "CLASS",
        name: field(node, "name"),
        node,
        body: node.childForFieldName("body"),
      };
    }
    if (node.type === "function_definition") {
      return {
        kind: "FUNCTION",
        name: field(node, "name"),
        node,
        body: node.childForFieldName("body"),
      };
    }
    return undefined;
  },
  heritage(node) {
    return named(node.childForFieldName("superclasses"))
      .filter((base) => base.type !== "keyword_argument")
      .map((base) => ({ kind: "EXTENDS", name: base.text }));
  },
  imports(node) {
    if (node.type === "import_from_statement") return [field(node, "module_name")];
    if (node.type !== "import_statement") return [];
    return named(node).map((name) =>
      name.type === "aliased_import" ? field(name, "name") : name.text
    );
  },
  callee: (node) => calleeField(node, "call"),
  innerDoc(body) {
    const first = body.namedChild(0);
    const string = first?.type === "expression_statement" ? first.namedChild(0) : null;
    if (string?.type !== "string") return undefined;
    return string.text.replace(/^[rRuUbB]*("""|'''|"|')/, "").replace(/("""|'''|"|')$/, "");
  },
};

function goReceiver(node: Node): string {
  const types = node.childForFieldName("receiver")?.descendantsOfType("type_identifier") ?? [];
  return types[0]?.text ?? "";
}

const go: LanguageSpec = {
  grammar: "go",
  nodeTypes: [
    "function_declaration",
    "method_declaration",
    "type_spec",
    "import_spec",
    "call_expression",
  ],
  declaration(node) {
    const body = node.childForFieldName("body");
    if (node.type === "function_declaration") {
      return { kind: "FUNCTION", name: field(node, "name"), node, body };
    }
    if (node.type === "method_declaration") {
      return { kind: "FUNCTION", name: field(node, "name"), node, body, owner: goReceiver(node) };
    }
    if (node.type === "type_spec") {
      const type = node.childForFieldName("type");
      const start = node.parent?.namedChildCount === 1 ? node.parent : node;
      if (type?.type === "struct_type") {
        return { kind: "CLASS", name: field(node, "name"), node: start, body: type.namedChild(0) };
      }
      if (type?.type === "interface_type") {
        return { kind: "INTERFACE", name: field(node, "name"), node: start, body: null };
      }
    }
    return undefined;
  },
  heritage(node) {
    const type = node.childForFieldName("type");
    if (type?.type !== "interface_type") return [];
    // An interface's embedded interfaces are what it extends.
    return named(type).filter((child) => child.type === "type_elem")
      .map((child) => ({ kind: "EXTENDS", name: child.text }));
  },
  imports(node) {
    if (node.type !== "import_spec") return [];
    return [unquote(field(node, "path"))];
  },
  callee: (node) => calleeField(node, "call_expression"),
};

const java: LanguageSpec = {
  grammar: "java",
  nodeTypes: [
    "class_declaration",
    "enum_declaration",
    "record_declaration",
    "interface_declaration",
    "method_declaration",
    "constructor_declaration",
    "import_declaration",
    "method_invocation",
  ],
  declaration(node) {
    const body = node.childForFieldName("body");
    const name = field(node, "name");
    switch (node.type) {
      case "class_declaration":
      case "enum_declaration":
      case "record_declaration":
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
    const out: Heritage[] = [];
    const superclass = node.childForFieldName("superclass");
    if (superclass) out.push({ kind: "EXTENDS", name: superclass.text.replace(/^extends\s+/, "") });
    const types = (
      clause: Node | null | undefined,
    ) => (clause?.descendantsOfType("type_list")[0]
      ? named(clause.descendantsOfType("type_list")[0])
      : []);
    for (const type of types(node.childForFieldName("interfaces"))) {
      out.push({ kind: "IMPLEMENTS", name: type.text });
    }
    const extended = named(node).find((child) => child.type === "extends_interfaces");
    for (const type of types(extended)) out.push({ kind: "EXTENDS", name: type.text });
    return out;
  },
  imports(node) {
    if (node.type !== "import_declaration") return [];
    // `;` first, then trimEnd(): a leading `\s*` was tried at each space of a long run.
    return [node.text.replace(/^import\s+(static\s+)?/, "").replace(/;\s*$/, "").trimEnd()];
  },
  callee(node) {
    if (node.type !== "method_invocation") return undefined;
    const object = node.childForFieldName("object");
    const name = field(node, "name");
    return object ? `${object.text}.${name}` : name;
  },
};

const rust: LanguageSpec = {
  grammar: "rust",
  nodeTypes: [
    "struct_item",
    "enum_item",
    "union_item",
    "trait_item",
    "function_item",
    "impl_item",
    "use_declaration",
    "call_expression",
  ],
  declaration(node) {
    const name = field(node, "name");
    const body = node.childForFieldName("body");
    switch (node.type) {
      case "struct_item":
      case "enum_item":
      case "union_item":
        return { kind: "CLASS", name, node, body };
      case "trait_item":
        return { kind: "INTERFACE", name, node, body };
      case "function_item":
        return { kind: "FUNCTION", name, node, body };
    }
    return undefined;
  },
  heritage(node) {
    const bounds = node.type === "trait_item" ? node.childForFieldName("bounds") : null;
    return named(bounds).map((bound) => ({ kind: "EXTENDS", name: bound.text }));
  },
  scope(node) {
    if (node.type !== "impl_item") return undefined;
    const owner = (node.childForFieldName("type")?.text ?? "").replace(/<.*$/s, "");
    const trait = node.childForFieldName("trait");
    return { owner, heritage: trait ? [{ kind: "IMPLEMENTS", name: trait.text }] : [] };
  },
  imports(node) {
    if (node.type !== "use_declaration") return [];
    return [field(node, "argument")];
  },
  callee: (node) => calleeField(node, "call_expression"),
};

const BY_EXTENSION: Record<string, LanguageSpec> = {
  ts: ecma("typescript"),
  mts: ecma("typescript"),
  cts: ecma("typescript"),
  tsx: ecma("tsx"),
  js: ecma("javascript"),
  mjs: ecma("javascript"),
  cjs: ecma("javascript"),
  jsx: ecma("javascript"),
  py: python,
  pyi: python,
  go,
  java,
  rs: rust,
  cs: csharp,
  rb: ruby,
  c: cpp,
  h: cpp,
  cc: cpp,
  cpp,
  cxx: cpp,
  hh: cpp,
  hpp: cpp,
  hxx: cpp,
  php,
  sh: bash,
  bash,
};

/** The language of `path` by its extension, or undefined for plain text. */
export function languageOf(path: string): LanguageSpec | undefined {
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return undefined;
  return BY_EXTENSION[path.slice(dot + 1).toLowerCase()];
}
