"""suggest.rank: what was typed decides the order, and the list is capped."""

from __future__ import annotations

from imqueue_mcp.server.docs.suggest import MAX_VALUES, complete_package_list, rank


def test_prefix_then_segment_start_then_substring_shallow_first() -> None:
    paths = [
        "blog/backpressure-nodejs-services/",
        "api/rpc/latest/rpc.send/",
        "api/rpc/latest/",
        "rpc-guide/",
        "api/core/latest/core.rpc-helper/",
        "grpc-compare/",
    ]
    found = rank(paths, "RPC")
    assert found.values == [
        "rpc-guide/",  # starts with it
        "api/rpc/latest/",  # a segment starts with it; shallower first
        "api/rpc/latest/rpc.send/",
        "api/core/latest/core.rpc-helper/",
        "grpc-compare/",  # merely contains it
    ]
    assert found.total == 5 and not found.has_more


def test_the_list_is_capped_with_the_true_total() -> None:
    found = rank([f"page-{number}/" for number in range(50)], "page")
    assert len(found.values) == MAX_VALUES and found.total == 50 and found.has_more
    assert found.values[:3] == ["page-0/", "page-1/", "page-2/"]  # shorter first, then alphabetical
    assert rank(["intro/"], "nothing like it").values == []


def test_a_package_list_completes_its_last_item_and_skips_those_named() -> None:
    assert complete_package_list("pg-pr").values == ["pg-prisma"]
    found = complete_package_list("rpc, @imqueue/pg-")
    assert found.values and all(value.startswith("rpc, pg-") for value in found.values)
    after_rpc = complete_package_list("rpc,").values
    assert after_rpc and all(value.startswith("rpc, ") and value != "rpc, rpc" for value in after_rpc)
