project = "edge"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

locals {
  fields = ["title", "hits"]
}

index "logs" {
  search = "t1"
  mapping "doc" {
    properties = local.fields # ERROR: Invalid properties
  }
}
