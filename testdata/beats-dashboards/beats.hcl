# The 111 saved objects of elastic/beats-dashboards, declared as the files
# hold them: one document block per type, one instance per file. The
# objects already live (after load.sh) are taken over in place by the
# import blocks, which list the same files.

project = "beats"

variable "search_url" {
  type = string
}

search "t1" {
  url          = var.search_url
  cluster_name = "beats"
}

locals {
  types = ["index-pattern", "search", "visualization", "dashboard"]
  # Each file's object, by type and file name: what load.sh PUTs.
  objects = { for t in local.types : t => { for f in fileset("dashboards/${t}", "*.json") : f => jsondecode(file("dashboards/${t}/${f}")) } }
  # load.sh names an index pattern by its title, the others by their file.
  ids = { for t in local.types : t => { for f, o in local.objects[t] : f => t == "index-pattern" ? o.title : trimsuffix(f, ".json") } }
}

# The mappings as load.sh leaves them: its own for search, Elasticsearch's
# dynamic ones for the rest.
index ".kibana" {
  search = "t1"
  mapping "index-pattern" {
    properties = { title = "string", timeFieldName = "string", fields = "string", fieldFormatMap = "string" }
  }
  mapping "search" {
    properties = {
      title = "string", description = "string", hits = "integer", version = "integer", columns = "string", sort = "string"
      "kibanaSavedObjectMeta.searchSourceJSON" = "string"
    }
  }
  mapping "visualization" {
    properties = {
      title = "string", description = "string", version = "integer", visState = "string", uiStateJSON = "string", savedSearchId = "string"
      "kibanaSavedObjectMeta.searchSourceJSON" = "string"
    }
  }
  mapping "dashboard" {
    properties = {
      title = "string", description = "string", hits = "integer", version = "integer", panelsJSON = "string", optionsJSON = "string"
      uiStateJSON = "string", timeRestore = "boolean"
      "kibanaSavedObjectMeta.searchSourceJSON" = "string"
    }
  }
}

document "index-pattern" "beats" {
  for_each = local.objects["index-pattern"]
  id       = local.ids["index-pattern"][each.key]
  source   = each.value
}

document "search" "beats" {
  for_each = local.objects["search"]
  id       = local.ids["search"][each.key]
  source   = each.value
}

document "visualization" "beats" {
  for_each = local.objects["visualization"]
  id       = local.ids["visualization"][each.key]
  source   = each.value
}

document "dashboard" "beats" {
  for_each = local.objects["dashboard"]
  id       = local.ids["dashboard"][each.key]
  source   = each.value
}

import {
  to = index[".kibana"]
}

import {
  for_each = toset(flatten([for t in local.types : [for f, id in local.ids[t] : "${t}/${id}"]]))
  to       = document[".kibana/${each.value}"]
}
