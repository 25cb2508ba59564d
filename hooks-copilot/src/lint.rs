//! `dsh hooks check` for Copilot hook files: the problems Copilot would
//! only write to its log (a file it skips, an entry it drops), and the
//! PascalCase expectations Copilot does not honour.
