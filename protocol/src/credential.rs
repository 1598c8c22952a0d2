//! Which task inputs are credentials, and which fields may take them.
//!
//! An input is a credential by its name (`--input NAME=…`): a *secret* when the name says
//! password, passphrase, PIN, token, secret or one-time code (`password`, `admin_pass`, `pwd`,
//! `pin`, `otp`, `totp`, `code`, `2fa_code`, …), a *user name* when it says user or login
//! (`username`, `user`, `login`). Name a one-time code's input `code`, `otp` or `totp` (as
//! `forager capsule capture --totp code=…` does).
//!
//! A credential is typed only into a field made for it, never into a form that sends by
//! `GET` (its value would travel in the URL, into logs and history), never into a search
//! box or a record's field:
//!
//! - a secret into a password field (`type=password`, or `autocomplete` `current-password` /
//!   `new-password`), a one-time code also into a field for one (`autocomplete=one-time-code`,
//!   or a field that says code, OTP, token, verification or authenticator);
//! - a user name into a login form's user field: `autocomplete=username` (or `email`), or,
//!   in a form that holds a password field or posts, a field that says user, login, e-mail,
//!   account or identifier.

use crate::action::Sends;
use crate::observation::Element;

/// What kind of credential an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// A password, a PIN, a token, a one-time code.
    Secret {
        /// A one-time code (`code`, `otp`, `totp`, `2fa`…): also fits a field made for one.
        one_time: bool,
    },
    /// The name one logs in with.
    UserName,
}

/// The words of an input's or a field's name: lower case, split at anything not a letter or
/// a digit.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Credential {
    /// The kind of credential an input of this name is, if it is one.
    pub fn of(input_name: &str) -> Option<Credential> {
        let words = words(input_name);
        let has = |w: &str| words.iter().any(|x| x == w);
        let starts = |p: &str| words.iter().any(|x| x.starts_with(p));
        let one_time = has("code")
            || has("otp")
            || has("totp")
            || has("hotp")
            || has("2fa")
            || has("mfa")
            || starts("onetime");
        if one_time {
            return Some(Credential::Secret { one_time: true });
        }
        if starts("pass") || has("pwd") || has("pin") || has("secret") || has("token") {
            return Some(Credential::Secret { one_time: false });
        }
        if starts("user") || has("login") || has("uname") {
            return Some(Credential::UserName);
        }
        None
    }

    /// Whether `field` may take this credential. `form_has_password`: the field's form (or
    /// the page's fields around it) holds a password field, as a login form does.
    pub fn fits(self, field: &Element, form_has_password: bool) -> bool {
        // A form that sends by GET puts its values into the URL.
        if matches!(field.sends, Sends::Get { .. }) {
            return false;
        }
        let autocomplete = field.autocomplete.as_str();
        let says = |list: &[&str]| {
            let words = words(&format!("{} {}", field.name, autocomplete));
            words.iter().any(|w| list.iter().any(|l| w.starts_with(l)))
        };
        let password_field = field.input_type.eq_ignore_ascii_case("password")
            || autocomplete.contains("current-password")
            || autocomplete.contains("new-password");
        match self {
            Credential::Secret { one_time } => {
                password_field
                    || (one_time
                        && (autocomplete.contains("one-time-code")
                            || says(&[
                                "code",
                                "otp",
                                "token",
                                "verification",
                                "authenticator",
                                "2fa",
                            ])))
            }
            Credential::UserName => {
                !password_field
                    && (autocomplete.contains("username")
                        || autocomplete == "email"
                        || ((form_has_password || matches!(field.sends, Sends::Post { .. }))
                            && says(&["user", "login", "mail", "account", "identifier"])))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, input_type: &str, autocomplete: &str, sends: Sends) -> Element {
        Element {
            role: "textbox".into(),
            name: name.into(),
            text: String::new(),
            nearby_text: String::new(),
            record: String::new(),
            column: String::new(),
            tag: "input".into(),
            input_type: input_type.into(),
            href: None,
            locators: vec![],
            form: None,
            required: false,
            disabled: false,
            options: vec![],
            checked: false,
            popup: false,
            readonly: false,
            sends,
            autocomplete: autocomplete.into(),
            unsent: false,
        }
    }

    #[test]
    fn inputs_are_credentials_by_their_names() {
        let secret = Some(Credential::Secret { one_time: false });
        let code = Some(Credential::Secret { one_time: true });
        for (name, kind) in [
            ("password", secret),
            ("admin_pass", secret),
            ("passphrase", secret),
            ("pwd", secret),
            ("pin", secret),
            ("api-token", secret),
            ("code", code),
            ("otp", code),
            ("totp", code),
            ("2fa_code", code),
            ("username", Some(Credential::UserName)),
            ("user", Some(Credential::UserName)),
            ("login", Some(Credential::UserName)),
            ("email", None),
            ("title", None),
            ("spinach", None),
            ("country", None),
        ] {
            assert_eq!(Credential::of(name), kind, "{name}");
        }
    }

    #[test]
    fn secrets_go_only_into_fields_made_for_them_and_never_into_a_get_form() {
        let post = || Sends::Post {
            url: "http://h/login".into(),
        };
        let get = || Sends::Get {
            url: "http://h/issue".into(),
        };
        let password = Credential::Secret { one_time: false };
        let code = Credential::Secret { one_time: true };
        assert!(password.fits(&field("Password", "password", "", post()), true));
        assert!(password.fits(&field("Passwort", "text", "current-password", post()), true));
        assert!(!password.fits(&field("Search", "search", "", get()), false));
        assert!(!password.fits(&field("Show issue", "number", "", get()), false));
        assert!(!password.fits(&field("Title", "text", "", post()), false));
        // Even a password field, in a form that sends by GET.
        assert!(!password.fits(&field("Password", "password", "", get()), true));
        assert!(code.fits(&field("One-time code", "text", "", post()), false));
        assert!(code.fits(&field("", "text", "one-time-code", post()), false));
        assert!(!code.fits(&field("Search", "text", "", post()), false));
    }

    #[test]
    fn a_user_name_goes_only_into_a_login_forms_user_field() {
        let post = || Sends::Post {
            url: "http://h/login".into(),
        };
        let user = Credential::UserName;
        assert!(user.fits(&field("Username", "text", "username", post()), true));
        assert!(user.fits(&field("Username", "text", "", post()), true));
        assert!(user.fits(&field("E-mail", "email", "", post()), true));
        assert!(!user.fits(&field("Name", "text", "", post()), false));
        assert!(!user.fits(&field("Password", "password", "", post()), true));
        let get = Sends::Get {
            url: "http://h/issue".into(),
        };
        assert!(!user.fits(&field("Username", "text", "", get), false));
        assert!(!user.fits(&field("Search", "search", "", Sends::Unknown), false));
    }
}
