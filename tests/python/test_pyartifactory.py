"""pyartifactory (PyPI) against the simulator: every call succeeds and every answer parses in
the client's own pydantic models, which its authors wrote against real Artifactory answers
(JFrog REST API: Repository Configuration JSON, Security Configuration JSON, Permission
Targets v1/v2, File Info, Folder Info, Item Properties, Retrieve Artifact, Access Create Token).
"""

from __future__ import annotations

import hashlib

import pytest
from pydantic import SecretStr
from pyartifactory import Artifactory
from pyartifactory.models import (
    ArtifactFileInfoResponse,
    ArtifactFolderInfoResponse,
    Group,
    LocalRepository,
    LocalRepositoryResponse,
    NewUser,
    Permission,
    PermissionV2,
    RemoteRepository,
    RemoteRepositoryResponse,
    User,
    UserResponse,
    VirtualRepository,
    VirtualRepositoryResponse,
)
from pyartifactory.models.auth import AccessTokenModel
from pyartifactory.models.permission import PrincipalsPermission, PrincipalsPermissionV2, RepoV2


def client(sim, api_version: int = 1) -> Artifactory:
    return Artifactory(url=f"{sim['url']}/artifactory", access_token=sim["token"], api_version=api_version)


@pytest.mark.parametrize(
    "repo, answer",
    [
        (LocalRepository(key="py-maven-local", packageType="maven"), LocalRepositoryResponse),
        (LocalRepository(key="py-npm-local", packageType="npm"), LocalRepositoryResponse),
        (LocalRepository(key="py-docker-local", packageType="docker"), LocalRepositoryResponse),
        (
            RemoteRepository(key="py-pypi-remote", packageType="pypi", url="https://files.example.org"),
            RemoteRepositoryResponse,
        ),
        (
            RemoteRepository(key="py-generic-remote", packageType="generic", url="https://example.org/files"),
            RemoteRepositoryResponse,
        ),
    ],
)
def test_repositories_of_several_classes_and_package_types(sim, repo, answer):
    art = client(sim)
    created = art.repositories.create_repo(repo)
    assert isinstance(created, answer)
    assert created.key == repo.key
    assert created.packageType == repo.packageType
    again = art.repositories.get_repo(repo.key)
    assert isinstance(again, answer)
    repo.description = "updated by pyartifactory"
    updated = art.repositories.update_repo(repo)
    assert updated.description == "updated by pyartifactory"
    assert repo.key in [r.key for r in art.repositories.list()]


def test_virtual_repository_aggregates_locals(sim):
    art = client(sim)
    art.repositories.create_repo(LocalRepository(key="py-gen-a", packageType="generic"))
    virtual = art.repositories.create_repo(
        VirtualRepository(key="py-gen-virtual", packageType="generic", repositories=["py-gen-a"])
    )
    assert isinstance(virtual, VirtualRepositoryResponse)
    assert virtual.repositories == ["py-gen-a"]
    art.repositories.delete("py-gen-virtual")
    art.repositories.delete("py-gen-a")


def test_users_and_groups(sim):
    art = client(sim)
    group = art.groups.create(Group(name="py-devs", description="developers"))
    assert group.name == "py-devs"
    user = art.users.create(
        NewUser(name="py-alice", email="alice@example.org", password=SecretStr("Secr3tPassw0rd"), groups=["py-devs"])
    )
    assert isinstance(user, UserResponse)
    # Security Configuration JSON: disableUIAccess defaults to false.
    assert user.disableUIAccess is False
    assert user.groups == ["py-devs"]
    updated = art.users.update(User(name="py-alice", email="alice2@example.org", groups=["py-devs"]))
    assert updated.email == "alice2@example.org"
    # pyartifactory reads groups with ?includeUsers=True (Python's spelling of the boolean).
    fetched = art.groups.get("py-devs")
    assert isinstance(fetched, Group)
    assert "py-devs" in [g.name for g in art.groups.list()]
    assert "py-alice" in [u.name for u in art.users.list()]
    art.users.delete("py-alice")
    art.groups.delete("py-devs")


def test_permission_targets_v1_and_v2(sim):
    v1 = client(sim, api_version=1)
    v1.repositories.create_repo(LocalRepository(key="py-perm-local", packageType="generic"))
    v1.groups.create(Group(name="py-readers"))
    p1 = v1.permissions.create(
        Permission(
            name="py-perm-v1",
            repositories=["py-perm-local"],
            principals=PrincipalsPermission(groups={"py-readers": ["r", "w"]}),
        )
    )
    assert isinstance(p1, Permission)
    assert sorted(p1.principals.groups["py-readers"]) == ["r", "w"]
    assert "py-perm-v1" in [p.name for p in v1.permissions.list()]
    v2 = client(sim, api_version=2)
    # The v1 target is the v2 target's repo section: one store.
    seen = v2.permissions.get("py-perm-v1")
    assert isinstance(seen, PermissionV2)
    assert sorted(seen.repo.actions.groups["py-readers"]) == ["read", "write"]
    # pyartifactory creates v2 targets with PUT (documented "Create or Replace").
    p2 = v2.permissions.create(
        PermissionV2(
            name="py-perm-v2",
            repo=RepoV2(
                repositories=["py-perm-local"],
                actions=PrincipalsPermissionV2(groups={"py-readers": ["read"]}),
            ),
        )
    )
    assert isinstance(p2, PermissionV2)
    assert p2.repo.repositories == ["py-perm-local"]
    v1.permissions.delete("py-perm-v1")
    v2.permissions.delete("py-perm-v2")


def test_access_token_form_request(sim):
    # pyartifactory posts the form `username=...&expires_in=...&refreshable=False&scope=...`
    # to `<url>/access/api/v1/tokens`: with the platform's root URL that is Access's
    # "Create Token" endpoint.
    root = Artifactory(url=sim["url"], access_token=sim["token"])
    token = root.security.create_access_token(user_name="admin", expires_in=600)
    assert isinstance(token, AccessTokenModel)
    assert token.expires_in == 600
    assert token.token_type == "Bearer"


def test_deploy_file_and_folder_info_properties_download(sim, tmp_path):
    art = client(sim)
    art.repositories.create_repo(LocalRepository(key="py-files", packageType="generic"))
    content = b"hello from pyartifactory\n"
    local = tmp_path / "hello.txt"
    local.write_bytes(content)
    art.artifacts.deploy(local, "py-files/a/b/hello.txt")
    info = art.artifacts.info("py-files/a/b/hello.txt")
    assert isinstance(info, ArtifactFileInfoResponse)
    assert info.checksums.sha1 == hashlib.sha1(content).hexdigest()
    assert info.checksums.md5 == hashlib.md5(content).hexdigest()
    assert info.checksums.sha256 == hashlib.sha256(content).hexdigest()
    assert info.lastModified is not None and info.modifiedBy and info.lastUpdated is not None
    # Artifactory creates the parent folders a and a/b.
    folder = art.artifacts.info("py-files/a")
    assert isinstance(folder, ArtifactFolderInfoResponse)
    assert [c.uri for c in folder.children] == ["/b"]
    assert art.artifacts.info("py-files/a/b").children[0].uri == "/hello.txt"
    props = art.artifacts.set_properties("py-files/a/b/hello.txt", {"team": ["build"], "tier": ["1", "2"]})
    assert props.properties == {"team": ["build"], "tier": ["1", "2"]}
    folder_props = art.artifacts.set_properties("py-files/a", {"owner": ["ci"]})
    assert folder_props.properties == {"owner": ["ci"]}
    got = art.artifacts.download("py-files/a/b/hello.txt", str(tmp_path / "out"))
    assert got.read_bytes() == content
    art.artifacts.delete("py-files/a")
    with pytest.raises(Exception):
        art.artifacts.info("py-files/a/b/hello.txt")
