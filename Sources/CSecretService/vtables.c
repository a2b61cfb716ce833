#include "CSecretService.h"

// The interfaces as the Secret Service API 0.2 lists them. Every method
// goes to fob_ss_call, which dispatches on interface and member.

static const sd_bus_vtable service_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("OpenSession", "sv", "vo", fob_ss_call, 0),
    SD_BUS_METHOD("CreateCollection", "a{sv}s", "oo", fob_ss_call, 0),
    SD_BUS_METHOD("SearchItems", "a{ss}", "aoao", fob_ss_call, 0),
    SD_BUS_METHOD("Unlock", "ao", "aoo", fob_ss_call, 0),
    SD_BUS_METHOD("Lock", "ao", "aoo", fob_ss_call, 0),
    SD_BUS_METHOD("GetSecrets", "aoo", "a{o(oayays)}", fob_ss_call, 0),
    SD_BUS_METHOD("ReadAlias", "s", "o", fob_ss_call, 0),
    SD_BUS_METHOD("SetAlias", "so", "", fob_ss_call, 0),
    SD_BUS_PROPERTY("Collections", "ao", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_SIGNAL("CollectionCreated", "o", 0),
    SD_BUS_SIGNAL("CollectionDeleted", "o", 0),
    SD_BUS_SIGNAL("CollectionChanged", "o", 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable collection_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Delete", "", "o", fob_ss_call, 0),
    SD_BUS_METHOD("SearchItems", "a{ss}", "ao", fob_ss_call, 0),
    SD_BUS_METHOD("CreateItem", "a{sv}(oayays)b", "oo", fob_ss_call, 0),
    SD_BUS_PROPERTY("Items", "ao", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_WRITABLE_PROPERTY("Label", "s", fob_ss_get_property, fob_ss_set_property, 0,
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Locked", "b", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Created", "t", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Modified", "t", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_SIGNAL("ItemCreated", "o", 0),
    SD_BUS_SIGNAL("ItemDeleted", "o", 0),
    SD_BUS_SIGNAL("ItemChanged", "o", 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable item_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Delete", "", "o", fob_ss_call, 0),
    SD_BUS_METHOD("GetSecret", "o", "(oayays)", fob_ss_call, 0),
    SD_BUS_METHOD("SetSecret", "(oayays)", "", fob_ss_call, 0),
    SD_BUS_PROPERTY("Locked", "b", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_WRITABLE_PROPERTY("Attributes", "a{ss}", fob_ss_get_property, fob_ss_set_property, 0,
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_WRITABLE_PROPERTY("Label", "s", fob_ss_get_property, fob_ss_set_property, 0,
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Created", "t", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Modified", "t", fob_ss_get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable session_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Close", "", "", fob_ss_call, 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable prompt_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Prompt", "s", "", fob_ss_call, 0),
    SD_BUS_METHOD("Dismiss", "", "", fob_ss_call, 0),
    SD_BUS_SIGNAL("Completed", "bv", 0),
    SD_BUS_VTABLE_END,
};

const sd_bus_vtable *fob_ss_service_vtable(void) { return service_vtable; }
const sd_bus_vtable *fob_ss_collection_vtable(void) { return collection_vtable; }
const sd_bus_vtable *fob_ss_item_vtable(void) { return item_vtable; }
const sd_bus_vtable *fob_ss_session_vtable(void) { return session_vtable; }
const sd_bus_vtable *fob_ss_prompt_vtable(void) { return prompt_vtable; }
