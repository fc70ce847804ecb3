//! The REST binding of every configuration Kind: a descriptor section or plain paths.

use jfrog_client::Service;
use provider_family::{Call, ListCall, ListShape, Listed, Next, Pages, Paths, QueryParent, Verb};

use super::descriptor::{Delete, Place, Section};
use super::tables;

/// Plain paths with one `{key}` item path.
const fn item(service: Service, create: Call, item: &'static str, update: Call) -> Paths {
    Paths {
        service,
        create,
        read: Call::new(Verb::Get, item),
        update,
        delete: Call::new(Verb::Delete, item),
        list: None,
        case_insensitive: false,
    }
}

/// [`item`] observed through `list`: `GET` of the collection answering an array of whole
/// objects, each as the item read answers it, identified by `key_member`.
const fn listed(
    service: Service,
    create: Call,
    item_path: &'static str,
    update: Call,
    list: &'static str,
    key_member: &'static str,
) -> Paths {
    Paths {
        list: Some(ListCall {
            service,
            path: list,
            shape: ListShape::Array,
            key_member,
        }),
        ..item(service, create, item_path, update)
    }
}

/// Archive policies (`/artifactory/api/archive/v2/packages/policies/{key}`), listed by
/// `GET /artifactory/api/archive/v2/packages/policies`: an array of whole policies. Without
/// `projectKey` the list holds the global and the project-level policies alike (keys are
/// unique across projects, a project's starting with `<projectKey>-`); the policy's
/// `projectKey` is kept from the spec, as after a read by key.
pub static ARCHIVEPOLICY: Paths = listed(
    Service::Artifactory,
    Call::new(Verb::Post, "/api/archive/v2/packages/policies/{key}"),
    "/api/archive/v2/packages/policies/{key}",
    Call::new(Verb::Put, "/api/archive/v2/packages/policies/{key}"),
    "/api/archive/v2/packages/policies",
    "key",
);

/// Package cleanup policies, listed by `GET /artifactory/api/cleanup/packages/policies` (an
/// array of whole policies, global and project-level, as for [`ARCHIVEPOLICY`]).
pub static PACKAGECLEANUPPOLICY: Paths = listed(
    Service::Artifactory,
    Call::new(Verb::Post, "/api/cleanup/packages/policies/{key}"),
    "/api/cleanup/packages/policies/{key}",
    Call::new(Verb::Put, "/api/cleanup/packages/policies/{key}"),
    "/api/cleanup/packages/policies",
    "key",
);

/// Release bundle v2 cleanup policies, listed by `GET /artifactory/api/cleanup/bundles/policies`:
/// an array of whole policies (key, cronExp, itemType, durationInMinutes, enabled,
/// searchCriteria), global and project-level, as JFrog's "Get All Release Bundle v2 Cleanup
/// Policies" page shows it. An older page of that call shows an object of summaries
/// (`{"policies": [{"policyKey", "enabled", ...}]}`), without the settings: that answer is no
/// array, so it is not taken for the list and the policies are read by key.
pub static RELEASEBUNDLEV2CLEANUPPOLICY: Paths = listed(
    Service::Artifactory,
    Call::new(Verb::Post, "/api/cleanup/bundles/policies/{key}"),
    "/api/cleanup/bundles/policies/{key}",
    Call::new(Verb::Put, "/api/cleanup/bundles/policies/{key}"),
    "/api/cleanup/bundles/policies",
    "key",
);

/// LDAP settings of the Access service (the key travels in the body on create and update),
/// listed by `GET /access/api/v1/ldap/settings` (Artifactory 7.57.1+): an array of whole
/// settings whose `search.manager_password` is null, as in the read by key; the password is
/// write-only, never compared with an answer.
pub static LDAPSETTINGV2: Paths = listed(
    Service::Access,
    Call::new(Verb::Post, "/api/v1/ldap/settings"),
    "/api/v1/ldap/settings/{key}",
    Call::new(Verb::Put, "/api/v1/ldap/settings/"),
    "/api/v1/ldap/settings",
    "key",
);

/// LDAP group settings of the Access service, listed by `GET /access/api/v1/ldap/groups`
/// (Artifactory 7.57.1+): an array of whole group settings.
pub static LDAPGROUPSETTINGV2: Paths = listed(
    Service::Access,
    Call::new(Verb::Post, "/api/v1/ldap/groups"),
    "/api/v1/ldap/groups/{key}",
    Call::new(Verb::Put, "/api/v1/ldap/groups/"),
    "/api/v1/ldap/groups",
    "name",
);

const fn keyed(
    kind: &'static str,
    path: &'static str,
    key_member: &'static str,
    fields: &'static [provider_family::Field],
) -> Section {
    Section {
        kind,
        place: Place::Keyed { path, key_member },
        fields,
        delete: Delete::Remove,
    }
}

/// `backups`.
pub static BACKUP: Section = keyed("Backup", "backups", "key", tables::BACKUP);
/// `proxies`.
pub static PROXY: Section = keyed("Proxy", "proxies", "key", tables::PROXY);
/// `propertySets`.
pub static PROPERTYSET: Section = keyed("PropertySet", "propertySets", "name", tables::PROPERTYSET);
/// `repoLayouts`.
pub static REPOSITORYLAYOUT: Section = keyed(
    "RepositoryLayout",
    "repoLayouts",
    "name",
    tables::REPOSITORYLAYOUT,
);
/// `security.ldapSettings`.
pub static LDAPSETTING: Section = keyed(
    "LdapSetting",
    "security.ldapSettings",
    "key",
    tables::LDAPSETTING,
);
/// `security.ldapGroupSettings`.
pub static LDAPGROUPSETTING: Section = keyed(
    "LdapGroupSetting",
    "security.ldapGroupSettings",
    "name",
    tables::LDAPGROUPSETTING,
);

/// `mailServer` (a delete removes the block).
pub static MAILSERVER: Section = Section {
    kind: "MailServer",
    place: Place::Block {
        at: "mailServer",
        exists: Some("host"),
    },
    fields: tables::MAILSERVER,
    delete: Delete::Remove,
};

/// `trashcanConfig` (a delete resets JFrog's defaults).
pub static TRASHCANCONFIG: Section = Section {
    kind: "TrashcanConfig",
    place: Place::Block {
        at: "trashcanConfig",
        exists: None,
    },
    fields: tables::TRASHCANCONFIG,
    delete: Delete::Reset("{enabled: true, retentionPeriodDays: 14}"),
};

/// `security.anonAccessEnabled` and `security.passwordSettings` (a delete leaves them, as
/// upstream does).
pub static GENERALSECURITY: Section = Section {
    kind: "GeneralSecurity",
    place: Place::Block {
        at: "",
        exists: None,
    },
    fields: tables::GENERALSECURITY,
    delete: Delete::Keep,
};

/// `security.oauthSettings` (exists while it has providers; a delete turns it off and
/// removes them).
pub static OAUTHSETTINGS: Section = Section {
    kind: "OauthSettings",
    place: Place::Block {
        at: "",
        exists: Some("security.oauthSettings.oauthProvidersSettings"),
    },
    fields: tables::OAUTHSETTINGS,
    delete: Delete::Reset(
        "{security: {oauthSettings: {enableIntegration: false, persistUsers: false, allowUserToAccessProfile: false, oauthProvidersSettings: ~}}}",
    ),
};

/// `security.samlSettings` (a delete turns the integration off).
pub static SAMLSETTINGS: Section = Section {
    kind: "SamlSettings",
    place: Place::Block {
        at: "",
        exists: Some("security.samlSettings.loginUrl"),
    },
    fields: tables::SAMLSETTINGS,
    delete: Delete::Reset("{security: {samlSettings: {enableIntegration: false}}}"),
};

/// Release bundles v2 (`<name>:<version>`), observed through the versions list of their
/// name (JFrog's "Get Release Bundle v2 Versions", `GET
/// /lifecycle/api/v2/release_bundle/records/{name}`, Artifactory 7.63.2+ like the read by
/// key): one list per bundle name and poll for all its versions, whatever their status,
/// asked for with the largest page (255), oldest first (`order_by=created&order_asc=true`, so
/// versions made meanwhile come last) and followed by `offset` to its end. Each entry has the
/// members the Kind observes from the read by key (`service_id`, `created_by`, `created`,
/// the name and version). A 404 is the name without a version (each version absent). The
/// list asked without `project` shows the platform's Release Bundles repository only; a
/// project's bundles (`projectKey` set) are listed with `project` (JFrog's common query
/// parameter of the Release Lifecycle Management APIs: the project's repository), one list
/// per name and project. `export` lists the names ("Get Release Bundle v2 Names"), then each
/// name's versions in the platform's repository.
pub static RELEASEBUNDLEV2: Listed = Listed {
    parent_query: Some(PROJECT),
    ..Listed::per_parent(
        &super::objects::ReleaseBundles,
        ListCall {
            service: Service::Lifecycle,
            path: "/api/v2/release_bundle/records/{name}",
            shape: ListShape::Pages(&BUNDLE_PAGES),
            key_member: "release_bundle_version",
        },
        &["name", "projectKey"],
        &BUNDLE_NAMES,
    )
};

/// A release bundle's or promotion's project, after the list path's parameters: the list
/// asked with `project` shows the project's Release Bundles repository.
const PROJECT: QueryParent = QueryParent {
    name: "project",
    with: &[],
};

/// The pages of a bundle name's versions: at most 255 per page.
static BUNDLE_PAGES: Pages = Pages {
    member: "release_bundles",
    size: 255,
    next: Next::Offset(&[("order_by", "created"), ("order_asc", "true")]),
};

/// The platform's release bundle names (`GET /lifecycle/api/v2/release_bundle/names`:
/// `{"release_bundles": [{"release_bundle_name": ...}]}`), the parents `export` lists the
/// versions of.
static BUNDLE_NAMES: ListCall = ListCall {
    service: Service::Lifecycle,
    path: "/api/v2/release_bundle/names",
    shape: ListShape::Wrapped("release_bundles"),
    key_member: "release_bundle_name",
};
/// Release bundle v2 promotions (`<name>:<version>:<environment>`), observed through the
/// list of their environment (JFrog's "Get Release Bundle v2 Versions in a Specific
/// Environment", `GET /lifecycle/api/v2/promotion/release-bundles-by-environment/{environment}`,
/// Artifactory 7.107.1+): one list per environment and poll for all its promotions, asked
/// for with the largest page (255), oldest first (`order_by=created&order_asc=true`, so
/// promotions made meanwhile come last) and followed by `offset` to its end. The list shows
/// each bundle version where it is now (the environment of its newest promotion): a
/// promotion it lacks (a version promoted on since) is read by key, never taken as absent.
/// Asked without `project` it shows the platform's Release Bundles repository
/// (`release-bundles-v2`) only; a project's bundles' promotions are listed with `project`,
/// one list per environment and project. A platform without the list (404) is observed by
/// key, as before.
pub static RELEASEBUNDLEV2PROMOTION: Listed = Listed {
    parent_query: Some(PROJECT),
    ..Listed::per_parent(
        &super::objects::Promotions,
        ListCall {
            service: Service::Lifecycle,
            path: "/api/v2/promotion/release-bundles-by-environment/{environment}",
            shape: ListShape::Pages(&PROMOTION_PAGES),
            key_member: "release_bundle_name/release_bundle_version",
        },
        &["environment", "projectKey"],
        &ENVIRONMENTS,
    )
};

/// The pages of an environment's promotions: at most 255 per page.
static PROMOTION_PAGES: Pages = Pages {
    member: "promotions",
    size: 255,
    next: Next::Offset(&[("order_by", "created"), ("order_asc", "true")]),
};

/// The platform's environments (`GET /access/api/v1/environments`: `[{"name": ...}]`), the
/// parents `export` lists the promotions of.
static ENVIRONMENTS: ListCall = ListCall {
    service: Service::Access,
    path: "/api/v1/environments",
    shape: ListShape::Array,
    key_member: "name",
};
/// Artifacts.
pub static ARTIFACT: super::objects::Artifacts = super::objects::Artifacts;
/// Item properties.
pub static ITEMPROPERTIES: super::objects::ItemProperties = super::objects::ItemProperties;
