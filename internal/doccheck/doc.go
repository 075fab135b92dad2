// Package doccheck keeps the module's documentation true: every Go
// identifier a doc comment or a Markdown file cites must exist. Load lists
// and type-checks packages once (their dependencies come from the compiler's
// export data, so no package is checked twice and no module dependency is
// added); Set.Check then reads every doc comment — package, declaration,
// struct field and interface method — and resolves
//
//   - doc links: a name in brackets, optionally starred, qualified by a
//     package, followed by a method or field;
//   - qualified names in prose: a package's name and one of its exported
//     names (and a field or method of it), where the package is imported by
//     the file, is a package of the module or one of their dependencies; and
//     a type in scope followed by one of its fields or methods;
//   - exported declarations that show an unexported constant or variable
//     (an array length), which no reader can look up.
//
// Code blocks (indented lines) are illustrations and are not read.
// Set.CheckMarkdown does the same for a Markdown file: each Go block must
// type-check (a block without a package clause is checked as the body of a
// function, with its imports inferred), and each code span that names a Go
// identifier must resolve in some package. Set.CheckExamples reports an
// Example that godoc cannot show as a whole program because it uses a
// helper from another file.
//
// The test of this package runs it on the whole module, so a rename that
// leaves a stale citation fails the test; see the package's Example for
// what a report looks like.
package doccheck
