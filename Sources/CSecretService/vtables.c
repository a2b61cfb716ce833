#include "CSecretService.h"

// The interfaces as the Secret Service API 0.2 lists them. Every method
// goes to fob_ss_call, which dispatches on interface and member.
//
// Every method has the same handler and every property the same getter (and
// setter where writable), so a row names only what differs: the member and
// its D-Bus signatures.

#define METHOD(name, in, out) SD_BUS_METHOD(name, in, out, fob_ss_call, 0)
#define PROPERTY(name, sig) \
    SD_BUS_PROPERTY(name, sig, fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define WRITABLE(name, sig)                                                          \
    SD_BUS_WRITABLE_PROPERTY(name, sig, fob_ss_get_property, fob_ss_set_property, 0, \
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
// The Created, Deleted and Changed signals of one kind of object, each with
// the object's path.
#define LIFECYCLE_SIGNALS(kind)                 \
    SD_BUS_SIGNAL(kind "Created", "o", 0),     \
        SD_BUS_SIGNAL(kind "Deleted", "o", 0), \
        SD_BUS_SIGNAL(kind "Changed", "o", 0)

// A vtable: its start, the members given, its end.
#define VTABLE(name, ...) \
    static const sd_bus_vtable name[] = {SD_BUS_VTABLE_START(0), __VA_ARGS__, SD_BUS_VTABLE_END}

VTABLE(service_vtable,
       METHOD("OpenSession", "sv", "vo"), METHOD("CreateCollection", "a{sv}s", "oo"),
       METHOD("SearchItems", "a{ss}", "aoao"), METHOD("Unlock", "ao", "aoo"), METHOD("Lock", "ao", "aoo"),
       METHOD("GetSecrets", "aoo", "a{o(oayays)}"), METHOD("ReadAlias", "s", "o"), METHOD("SetAlias", "so", ""),
       PROPERTY("Collections", "ao"), LIFECYCLE_SIGNALS("Collection"));

// What a collection and an item both have: Delete, the Locked flag, a
// writable Label and the Created and Modified times (seconds since 1970).
#define STORED_OBJECT_MEMBERS                                                                          \
    METHOD("Delete", "", "o"), PROPERTY("Locked", "b"), WRITABLE("Label", "s"), PROPERTY("Created", "t"), \
        PROPERTY("Modified", "t")

VTABLE(collection_vtable,
       STORED_OBJECT_MEMBERS, METHOD("SearchItems", "a{ss}", "ao"), METHOD("CreateItem", "a{sv}(oayays)b", "oo"),
       PROPERTY("Items", "ao"), LIFECYCLE_SIGNALS("Item"));

VTABLE(item_vtable,
       STORED_OBJECT_MEMBERS, METHOD("GetSecret", "o", "(oayays)"), METHOD("SetSecret", "(oayays)", ""),
       WRITABLE("Attributes", "a{ss}"));

VTABLE(session_vtable, METHOD("Close", "", ""));

VTABLE(prompt_vtable, METHOD("Prompt", "s", ""), METHOD("Dismiss", "", ""), SD_BUS_SIGNAL("Completed", "bv", 0));

const sd_bus_vtable *fob_ss_service_vtable(void) { return service_vtable; }
const sd_bus_vtable *fob_ss_collection_vtable(void) { return collection_vtable; }
const sd_bus_vtable *fob_ss_item_vtable(void) { return item_vtable; }
const sd_bus_vtable *fob_ss_session_vtable(void) { return session_vtable; }
const sd_bus_vtable *fob_ss_prompt_vtable(void) { return prompt_vtable; }
