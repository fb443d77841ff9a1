"""The study app served to a browser: a sign-in by token in front of textual-serve's
terminal page, one app process per signed-in annotator (docs/design.md, studies)."""
