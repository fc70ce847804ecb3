//! JFrog's paged lists, paged as JFrog pages them.
//!
//! - The Access v2 lists (`GET /access/api/v2/users`, `/groups`, `/permissions`): objects
//!   in name order; `limit` objects per page (1,000 when not given; JFrog's "Get User List",
//!   "Get a List of Groups" and "Get Permissions": valid values 1 to 99,999), those after the
//!   name given as `cursor`; every non-empty page's answer carries `cursor`, the name of its
//!   last object (the last page's too, as JFrog's samples show), so a client knows it has the
//!   last page when the page is shorter than its `limit`.
//! - The SCIM lists (`GET /access/api/v1/scim/v2/Users`, `/Groups`): a `ListResponse`
//!   (RFC 7644 section 3.4.2.4) of `count` resources (20 when not given, JFrog's "GET Users"
//!   and "Get Groups") from the 1-based `startIndex`, with `totalResults` (every resource)
//!   and `itemsPerPage` (the resources of this page).

use std::collections::HashMap;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::errors::{ApiError, Flavor};

/// Objects per Access v2 page when `limit` is not given.
pub(crate) const ACCESS_DEFAULT_LIMIT: usize = 1_000;
/// The largest `limit` JFrog accepts.
pub(crate) const ACCESS_MAX_LIMIT: usize = 99_999;
/// Resources per SCIM page when `count` is not given.
pub(crate) const SCIM_DEFAULT_COUNT: usize = 20;

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Flavor::Access, StatusCode::BAD_REQUEST, msg)
}

/// One Access v2 page of `items` (in any order), each named by `name`: the page's objects
/// and the cursor its answer carries. A `limit` outside 1..=99,999 or not a number is a 400.
pub(crate) fn access_page(
    mut items: Vec<Value>,
    name: fn(&Value) -> &str,
    query: &HashMap<String, String>,
) -> Result<(Vec<Value>, Option<String>), ApiError> {
    let limit = match query.get("limit") {
        None => ACCESS_DEFAULT_LIMIT,
        Some(l) => match l.parse::<usize>() {
            Ok(n) if (1..=ACCESS_MAX_LIMIT).contains(&n) => n,
            _ => {
                return Err(bad(format!(
                    "limit must be a number between 1 and {ACCESS_MAX_LIMIT}"
                )));
            }
        },
    };
    items.sort_by(|a, b| name(a).cmp(name(b)));
    let after = query.get("cursor").map(String::as_str);
    let page: Vec<Value> = items
        .into_iter()
        .filter(|v| after.is_none_or(|c| name(v) > c))
        .take(limit)
        .collect();
    let cursor = page.last().map(|v| name(v).to_string());
    Ok((page, cursor))
}

/// The Access v2 answer `{"<member>": [...], "cursor": ...}` of one page.
pub(crate) fn access_answer(member: &str, page: Vec<Value>, cursor: Option<String>) -> Value {
    let mut m = serde_json::Map::new();
    m.insert(member.to_string(), Value::Array(page));
    if let Some(c) = cursor {
        m.insert("cursor".to_string(), Value::String(c));
    }
    Value::Object(m)
}

/// One SCIM `ListResponse` page of `items` (in the store's order): `startIndex` below 1 is
/// taken as 1 and a negative `count` as 0 (RFC 7644); a value that is not a number is a
/// 400.
pub(crate) fn scim_page(
    items: Vec<Value>,
    query: &HashMap<String, String>,
) -> Result<Value, ApiError> {
    let number = |name: &str, default: i64| -> Result<i64, ApiError> {
        query.get(name).map_or(Ok(default), |v| {
            v.parse::<i64>()
                .map_err(|_| bad(format!("{name} must be a number")))
        })
    };
    let start = number("startIndex", 1)?.max(1);
    let count = number("count", SCIM_DEFAULT_COUNT as i64)?.max(0);
    let total = items.len();
    let page: Vec<Value> = items
        .into_iter()
        .skip(usize::try_from(start - 1).unwrap_or(usize::MAX))
        .take(usize::try_from(count).unwrap_or(usize::MAX))
        .collect();
    Ok(json!({
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        "totalResults": total,
        "itemsPerPage": page.len(),
        "startIndex": start,
        "Resources": page,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(n: usize) -> Vec<Value> {
        // Stored out of name order.
        (0..n)
            .rev()
            .map(|i| json!({"name": format!("g{i:04}")}))
            .collect()
    }

    fn name(v: &Value) -> &str {
        v["name"].as_str().unwrap_or_default()
    }

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(page: &[Value]) -> Vec<&str> {
        page.iter().map(name).collect()
    }

    /// Without `limit` an Access v2 list answers its first 1,000 objects in name order and
    /// the last one's name as the cursor; asked with that cursor, the rest.
    #[test]
    fn an_access_list_answers_a_thousand_by_default_then_the_rest_after_the_cursor() {
        let (page, cursor) = access_page(named(1_005), name, &q(&[])).unwrap();
        assert_eq!(page.len(), ACCESS_DEFAULT_LIMIT);
        assert_eq!(name(&page[0]), "g0000");
        assert_eq!(cursor.as_deref(), Some("g0999"));
        let (rest, cursor) = access_page(named(1_005), name, &q(&[("cursor", "g0999")])).unwrap();
        assert_eq!(names(&rest), ["g1000", "g1001", "g1002", "g1003", "g1004"]);
        // The last page carries a cursor too; the page after it is empty, without one.
        assert_eq!(cursor.as_deref(), Some("g1004"));
        let (none, cursor) = access_page(named(1_005), name, &q(&[("cursor", "g1004")])).unwrap();
        assert!(none.is_empty() && cursor.is_none());
    }

    /// `limit` sets the page size, within 1..=99,999.
    #[test]
    fn an_access_list_takes_a_limit_from_one_to_99999() {
        let (page, cursor) = access_page(named(5), name, &q(&[("limit", "2")])).unwrap();
        assert_eq!(names(&page), ["g0000", "g0001"]);
        assert_eq!(cursor.as_deref(), Some("g0001"));
        let (page, _) = access_page(named(5), name, &q(&[("limit", "99999")])).unwrap();
        assert_eq!(page.len(), 5);
        for l in ["0", "100000", "-1", "many"] {
            let e = access_page(named(5), name, &q(&[("limit", l)])).unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "limit={l}");
        }
        let answer = access_answer("groups", page, Some("g0004".into()));
        assert_eq!(answer["cursor"], "g0004");
        assert_eq!(answer["groups"].as_array().map(Vec::len), Some(5));
    }

    /// A SCIM list answers 20 resources unless `count` says otherwise, from `startIndex`,
    /// with `totalResults` counting every resource.
    #[test]
    fn a_scim_list_answers_twenty_by_default_with_the_total() {
        let all = || named(25);
        let page = scim_page(all(), &q(&[])).unwrap();
        assert_eq!(page["totalResults"], 25);
        assert_eq!(page["itemsPerPage"], 20);
        assert_eq!(page["startIndex"], 1);
        assert_eq!(page["Resources"].as_array().map(Vec::len), Some(20));
        let rest = scim_page(all(), &q(&[("startIndex", "21"), ("count", "10")])).unwrap();
        assert_eq!(rest["itemsPerPage"], 5);
        assert_eq!(rest["Resources"][0], all()[20]);
        let every = scim_page(all(), &q(&[("count", "10000")])).unwrap();
        assert_eq!(every["Resources"].as_array().map(Vec::len), Some(25));
        let none = scim_page(all(), &q(&[("count", "0")])).unwrap();
        assert_eq!(
            (none["totalResults"].clone(), none["itemsPerPage"].clone()),
            (json!(25), json!(0))
        );
        let low = scim_page(all(), &q(&[("startIndex", "0"), ("count", "-3")])).unwrap();
        assert_eq!(
            (low["startIndex"].clone(), low["itemsPerPage"].clone()),
            (json!(1), json!(0))
        );
        let e = scim_page(all(), &q(&[("count", "lots")])).unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }
}
