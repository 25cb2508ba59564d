//! `dsh hooks check`: the settings keys dsh does not act on, and the plugins
//! it cannot load. Both are warnings: Claude Code would act on them, so a
//! user moving a setup to dsh should know what does not come along.

use serde::de::IgnoredAny;

use crate::output::wire::{Entries, Field};

/// Top-level Claude Code settings keys dsh honours (hooks-claude README):
/// everything else in a settings file is ignored by dsh.
const HONOURED: &[&str] = &[
    "$schema",
    "hooks",
    "env",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "disableAllHooks",
    "allowManagedHooksOnly",
    // Modes, rules, additionalDirectories (dsh-permissions).
    "permissions",
    // A plugin's `hooks/hooks.json` may describe itself.
    "description",
];

/// The top-level keys of a Claude Code settings document dsh ignores, in
/// document order (none when the document is not an object).
pub(super) fn ignored_keys(document: &Field<Entries<IgnoredAny>>) -> Vec<String> {
    document
        .valid()
        .map(|object| {
            object
                .keys()
                .filter(|key| !HONOURED.contains(&key.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The loader's notices that say a plugin's hooks will not run.
pub(super) fn plugin_notices(notices: &[String]) -> Vec<String> {
    notices
        .iter()
        .filter(|notice| notice.contains("plugin") || notice.contains("enabledPlugins"))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_keys_dsh_does_not_act_on_are_listed() {
        let document = json!({
            "hooks": {}, "env": {}, "permissions": {"deny": []},
            "enabledPlugins": {}, "statusLine": {}, "model": "opus"
        });
        assert_eq!(
            ignored_keys(&Field::read(&document)),
            vec!["statusLine".to_owned(), "model".to_owned()]
        );
        assert!(ignored_keys(&Field::read(&json!([]))).is_empty());
    }

    #[test]
    fn plugin_notices_are_picked() {
        let notices = vec![
            "plugin a@m is enabled in /s but not installed (no entry in /i); its hooks do not run"
                .to_owned(),
            "hooks.Stop[0]: something else".to_owned(),
        ];
        assert_eq!(plugin_notices(&notices), vec![notices[0].clone()]);
    }
}
