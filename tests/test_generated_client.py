"""generate_client's reading of the file it generated: a client that names types it does not declare
(the running service never registered them) is said not to compile, with the fix."""

from __future__ import annotations

from pathlib import Path

from imqueue_mcp.server.imq.generated_client import read_generated_client, render_generated_client

# The generator's shape (IMQClient.create in @imqueue/rpc 3.7.2): the interfaces of the classes the
# service registered, then the client class whose methods name them.
HEAD = """import {
    IMQClient,
    IMQDelay,
    IMQMetadata,
    remote,
    profile,
} from '@imqueue/rpc';

export namespace orderService {
"""
ORDER = """    export interface Order  {
        id: string;
        items: Item[];
        totals?: Record<string, Money>;
    }
"""
CLIENT = """    export class OrderClient extends IMQClient {

        /**
         * @param {Item} item
         * @return {Promise<Order>}
         */
        @profile()
        @remote()
        public async addItem(orderId: string, item: Item, imqMetadata?: IMQMetadata, imqDelay?: IMQDelay)
        : Promise<Order> {
            return await this.remoteCall<Order>(...arguments);
        }

        @profile()
        @remote()
        public async pair(kind: 'Draft' | 'Sent', at: Date): Promise<[Order, number] | null> {
            return await this.remoteCall<[Order, number] | null>(...arguments);
        }
    }
}
"""


def test_types_a_client_uses_but_does_not_declare_are_named_with_the_fix(tmp_path: Path) -> None:
    file = tmp_path / "OrderService.ts"
    file.write_text(HEAD + ORDER + CLIENT)

    generated = read_generated_client(file, "OrderService")

    # Order is declared; Date is TypeScript's, 'Draft' a literal.
    assert generated["undeclared"] == ["Item", "Money"]
    text = render_generated_client(generated)
    assert "WARNING: this client will not compile: it uses Item, Money" in text
    assert "@classType()" in text and "import './types.js'" in text


def test_a_client_that_declares_every_type_it_uses_carries_no_warning(tmp_path: Path) -> None:
    file = tmp_path / "OrderService.ts"
    declared = "    export interface Item { sku: string; }\n    export interface Money { cents: number; }\n"
    file.write_text(HEAD + declared + ORDER + CLIENT)

    generated = read_generated_client(file, "OrderService")

    assert "undeclared" not in generated and "will not compile" not in render_generated_client(generated)


def test_an_enum_the_client_names_is_told_to_be_written_as_its_literal_union(tmp_path: Path) -> None:
    file = tmp_path / "OrderService.ts"
    file.write_text(HEAD + ORDER.replace("id: string;", "status: OrderStatus;") + CLIENT)

    text = render_generated_client(read_generated_client(file, "OrderService"))

    assert "OrderStatus" in text and "An enum or a type alias is no class" in text


def test_what_json_cannot_carry_is_named_where_the_client_types_it(tmp_path: Path) -> None:
    # audit 12: @property('Date') on a service's field gave a client typed Date that holds a string
    file = tmp_path / "OrderService.ts"
    dated = ORDER.replace("id: string;", "id: string;\n        placedAt?: Date;\n        tags: Set<string>;")
    file.write_text(HEAD + dated + CLIENT)

    generated = read_generated_client(file, "OrderService")

    where = [note.split(" has the type ")[0] for note in generated["notJson"]]
    assert where == ["Order.placedAt", "Order.tags", "pair()'s parameter at"]
    assert "ISO string" in generated["notJson"][0] and "Declare string" in generated["notJson"][0]
    text = render_generated_client(generated)
    assert "WARNING: this client compiles, but it types values the queue cannot deliver" in text
    # a return that carries none, and the metadata and delay parameters, are not named
    assert not any("addItem" in note for note in generated["notJson"])
