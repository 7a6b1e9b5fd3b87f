project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index "logs" { # ERROR: Invalid index name
  for_each = toset(["ok", "UP"])
  search   = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}
