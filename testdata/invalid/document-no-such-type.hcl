project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index ".dashboard" {
  search = "t1"
  mapping "index-pattern" {
    properties = { title = "string", fields = "string" }
  }
  mapping "search" {
    properties = { title = "string", version = "integer", "dashboardSavedObjectMeta.searchSourceJSON" = "string" }
  }
  mapping "visualization" {
    properties = { title = "string", visState = "string", savedSearchId = "string" }
  }
}

document "dashboard" "edge" { # ERROR: No index maps the document's type
  source = { title = "Edge" }
}
