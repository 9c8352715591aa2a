df = pd.read_csv("data/gps_fixes.csv", parse_dates=["timestamp"])
fixes = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["lon"], df["lat"]), crs=4326).to_crs(32613)
fixes = fixes.sort_values(["animal_id", "timestamp"]).reset_index(drop=True)
sizes = [len(fixes), fixes["animal_id"].nunique()]
# %%
span_hours = {a: round(float((g["timestamp"].max() - g["timestamp"].min()).total_seconds() / 3600), 2) for a, g in fixes.groupby("animal_id")}
# %%
mean_step_m = {a: round(float(np.hypot(np.diff(g.geometry.x), np.diff(g.geometry.y)).mean()), 1) for a, g in fixes.groupby("animal_id")}
# %%
mean_turn_deg = {}
for a, g in fixes.groupby("animal_id"):
    heading = np.degrees(np.arctan2(np.diff(g.geometry.y), np.diff(g.geometry.x)))
    turn = (np.diff(heading) + 180) % 360 - 180
    mean_turn_deg[a] = round(float(np.abs(turn).mean()), 2)
# %%
import math
mcp95_km2 = {}
for a, g in fixes.groupby("animal_id"):
    cx, cy = g.geometry.x.mean(), g.geometry.y.mean()
    d = np.hypot(g.geometry.x - cx, g.geometry.y - cy)
    keep = g.iloc[np.argsort(d.to_numpy(), kind="stable")[:math.ceil(0.95 * len(g))]]
    mcp95_km2[a] = round(float(keep.union_all().convex_hull.area / 1e6), 4)
# %%
day = fixes["timestamp"].dt.date
best = 0.0
for (a, d), g in fixes.groupby(["animal_id", day]):
    best = max(best, g.geometry.iloc[0].distance(g.geometry.iloc[-1]))
max_daily_km = round(float(best / 1000), 3)
# %%
fixes["hour"] = fixes["timestamp"].dt.floor("h")
a, b = fixes[fixes["animal_id"] == "D1"], fixes[fixes["animal_id"] == "D2"]
m = a.merge(b, on="hour", suffixes=("_1", "_2"))
closest_d1_d2_m = round(float(gpd.GeoSeries(m["geometry_1"], crs=32613).distance(gpd.GeoSeries(m["geometry_2"], crs=32613)).min()), 1) if len(m) else None
# %%
from shapely.geometry import LineString
total_track_km = round(float(sum(LineString(list(zip(g.geometry.x, g.geometry.y))).length for _, g in fixes.groupby("animal_id")) / 1000), 3)
# %%
fixes_per_animal = {k: int(v) for k, v in fixes.groupby("animal_id").size().items()}
# %%
from shapely.geometry import LineString
mean_speed_kmh = {a: round(float(LineString(list(zip(g.geometry.x, g.geometry.y))).length / 1000 / span_hours[a]), 4) for a, g in fixes.groupby("animal_id")}
# %%
max_gap_hours = round(float(max(g["timestamp"].diff().dt.total_seconds().max() for _, g in fixes.groupby("animal_id")) / 3600), 3)
