"""A small legitimate environment honouring the env-class contract (used by the episode specs)."""

INVENTORY_CODE = '''
class Inventory:
    """A warehouse: items keyed by sku, an order log."""

    def __init__(self, init_config: dict = None):
        cfg = init_config or {}
        self.items = cfg.get("items", {})
        self.orders = cfg.get("orders", [])
        self._calls = 0

    def list_items(self) -> dict:
        """List all items."""
        self._calls += 1
        return {"success": True, "data": sorted(self.items.values(), key=lambda i: i["sku"])}

    def get_item(self, sku: str) -> dict:
        """Get one item."""
        if sku not in self.items:
            return {"success": False, "error": f"no item {sku}"}
        return {"success": True, "data": self.items[sku]}

    def add_item(self, sku: str, name: str, qty: int = 0, tags: list = None) -> dict:
        """Add a new item."""
        if sku in self.items:
            return {"success": False, "error": f"item {sku} exists"}
        self.items[sku] = {"sku": sku, "name": name, "qty": qty, "tags": list(tags or [])}
        return {"success": True, "message": f"added {sku}"}

    def restock(self, sku: str, qty: int) -> dict:
        """Add stock."""
        if sku not in self.items:
            return {"success": False, "error": f"no item {sku}"}
        if qty <= 0:
            return {"success": False, "error": "qty must be positive"}
        self.items[sku]["qty"] += qty
        return {"success": True, "data": self.items[sku]["qty"]}

    def order(self, sku: str, qty: int, priority: str = "normal") -> dict:
        """Ship an order."""
        item = self.items.get(sku)
        if item is None:
            return {"success": False, "error": f"no item {sku}"}
        if item["qty"] < qty:
            return {"success": False, "error": "not enough stock"}
        item["qty"] -= qty
        self.orders.append({"sku": sku, "qty": qty, "priority": priority})
        return {"success": True, "data": len(self.orders)}

    def remove_item(self, sku: str) -> dict:
        """Remove an item."""
        if self.items.pop(sku, None) is None:
            return {"success": False, "error": f"no item {sku}"}
        return {"success": True, "message": f"removed {sku}"}
'''


def _tool(name, props, required):
    return {"type": "function", "function": {"name": name, "description": name,
            "parameters": {"type": "object", "properties": props, "required": required}}}


INVENTORY_TOOLS = [
    _tool("list_items", {}, []),
    _tool("get_item", {"sku": {"type": "string"}}, ["sku"]),
    _tool("add_item", {"sku": {"type": "string"}, "name": {"type": "string"}, "qty": {"type": "integer"},
                       "tags": {"type": "array", "items": {"type": "string"}}}, ["sku", "name"]),
    _tool("restock", {"sku": {"type": "string"}, "qty": {"type": "integer"}}, ["sku", "qty"]),
    _tool("order", {"sku": {"type": "string"}, "qty": {"type": "integer"},
                    "priority": {"type": "string", "enum": ["low", "normal", "high"]}}, ["sku", "qty"]),
    _tool("remove_item", {"sku": {"type": "string"}}, ["sku"]),
]

INVENTORY_STATE = {
    "items": {"a1": {"sku": "a1", "name": "bolt", "qty": 10, "tags": ["metal"]},
              "b2": {"sku": "b2", "name": "nut", "qty": 5, "tags": []}},
    "orders": [],
}
