# The dashboard tool's saved objects, declared: behind the read-only tribe
# node the tool cannot save them, so they are written on t1's master like
# the index. An object field of a string mapping (visState, panelsJSON,
# searchSourceJSON) is stored as the JSON text the tool reads, and compared
# as JSON. References (a search's index pattern, a visualization's search,
# a dashboard's panels) are checked and order the writes: the index
# pattern, then the search, the visualization, the dashboard. The index
# pattern is shared; each team's search, visualization and dashboard come
# with its gated API (specs/modules/gated-api/objects/).

document "index-pattern" "logs" {
  id = "logs-*"
  source = {
    title         = "logs-*"
    timeFieldName = "@timestamp"
    fields = [
      { name = "@timestamp", type = "date", count = 0, scripted = false, indexed = true, analyzed = false, doc_values = true },
      { name = "level", type = "string", count = 0, scripted = false, indexed = true, analyzed = false, doc_values = true },
    ]
  }
}
