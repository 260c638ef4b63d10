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

    assert "undeclared" not in generated and "WARNING" not in render_generated_client(generated)
