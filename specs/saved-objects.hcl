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

# One dashboard of every team's error rate, its panels named through the
# gated-api module's outputs (module.gated_api[<team>].error_rate): a team
# added or removed in gated-api.hcl adds or removes its panel in the same
# plan, and the dashboard is written after the visualizations it shows.
document "dashboard" "teams" {
  for_each = var.dashboards ? { teams = sort(keys(module.gated_api)) } : {}
  id       = "teams"
  source = {
    title       = "Teams"
    hits        = 0
    description = "Each team's error rate, side by side."
    version     = 1
    panelsJSON = [
      for i, team in each.value : {
        id  = module.gated_api[team].error_rate, type = "visualization", panelIndex = i + 1,
        col = 1 + 6 * (i % 2), row = 1 + 3 * floor(i / 2), size_x = 6, size_y = 3
      }
    ]
    "dashboardSavedObjectMeta.searchSourceJSON" = { filter = [] }
  }
}
