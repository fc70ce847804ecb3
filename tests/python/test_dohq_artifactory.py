"""dohq-artifactory (PyPI, `artifactory.ArtifactoryPath` and `dohq_artifactory.admin`)
against the simulator: its admin objects PUT then re-read every object and parse the answer
into their own attributes (Repository Configuration JSON, Security Configuration JSON incl.
the v1 PermissionTarget), and its path API reads File/Folder Info, Item Properties and
Retrieve Artifact answers.
"""

from __future__ import annotations

import hashlib

from artifactory import ArtifactoryPath
from dohq_artifactory.admin import (
    Group,
    PermissionTarget,
    RepositoryLocal,
    RepositoryRemote,
    RepositoryVirtual,
    User,
)


def root(sim) -> ArtifactoryPath:
    return ArtifactoryPath(f"{sim['url']}/artifactory", token=sim["token"])


def test_repositories(sim):
    art = root(sim)
    local = RepositoryLocal(art, "dohq-npm-local", package_type=RepositoryLocal.NPM)
    local.create()
    assert local.read() and local.package_type == "npm"
    docker = RepositoryLocal(art, "dohq-docker-local", package_type=RepositoryLocal.DOCKER, docker_api_version="V2")
    docker.create()
    assert docker.read() and docker.docker_api_version == "V2"
    remote = RepositoryRemote(art, "dohq-maven-remote", url="https://repo.example.org/maven2", package_type="maven")
    remote.create()
    assert remote.read() and remote.url == "https://repo.example.org/maven2"
    virtual = RepositoryVirtual(art, "dohq-npm-virtual", repositories=["dohq-npm-local"], package_type="npm")
    virtual.create()
    assert virtual.read() and [r.name for r in virtual.repositories] == ["dohq-npm-local"]
    assert art.find_repository_local("dohq-npm-local") is not None
    for repo in (virtual, remote, docker, local):
        repo.delete()
    assert not RepositoryLocal(art, "dohq-npm-local").read()


def test_users_groups_and_v1_permission_target(sim):
    art = root(sim)
    group = Group(art, "dohq-team")
    group.description = "a team"
    group.create()
    assert group.read() and group.description == "a team"
    user = User(art, "dohq-bob", email="bob@example.org", password="Passw0rdPassw0rd")
    user.add_to_group(group)
    user.create()
    assert user.read()
    assert user.disable_ui_access is False
    assert [g.name for g in user.groups] == ["dohq-team"]
    repo = RepositoryLocal(art, "dohq-perm-local")
    repo.create()
    perm = PermissionTarget(art, "dohq-perm")
    perm.add_repository(repo)
    perm.add_group(group, PermissionTarget.ROLE_DEPLOY)
    perm.add_user(user, "r")
    perm.create()
    assert perm.read()
    assert sorted(perm._groups["dohq-team"]) == sorted(PermissionTarget.ROLE_DEPLOY)
    assert perm._users == {"dohq-bob": ["r"]}
    assert perm._repositories == ["dohq-perm-local"]
    perm.delete()
    assert not perm.read()
    user.delete()
    group.delete()
    repo.delete()


def test_files_folders_properties_download(sim):
    art = root(sim)
    RepositoryLocal(art, "dohq-files").create()
    content = b"dohq content\n"
    path = art / "dohq-files" / "x" / "y" / "z.txt"
    path.write_bytes(content)
    stat = path.stat()
    assert stat.sha1 == hashlib.sha1(content).hexdigest()
    assert stat.md5 == hashlib.md5(content).hexdigest()
    assert stat.sha256 == hashlib.sha256(content).hexdigest()
    assert stat.size == len(content) and not stat.is_dir
    folder = art / "dohq-files" / "x"
    assert folder.is_dir() and [p.name for p in folder.iterdir()] == ["y"]
    path.properties = {"stage": "qa", "tags": ["a", "b"]}
    assert path.properties == {"stage": ["qa"], "tags": ["a", "b"]}
    folder.properties = {"owner": "ci"}
    assert folder.properties == {"owner": ["ci"]}
    assert path.read_bytes() == content
    made = art / "dohq-files" / "empty"
    made.mkdir()
    assert made.is_dir()
    path.unlink()
    assert not path.exists()
