# The live title is a not_analyzed string; the declaration says "string",
# which Elasticsearch takes as an analyzed one, and adds a field.
project = "fid"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index "fid" {
  search = "t1"
  mapping "doc" {
    properties = {
      title = "string"
      extra = "integer"
    }
  }
}
