df = pd.read_csv("data/gps_fixes.csv", parse_dates=["timestamp"])
fixes = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df["lon"], df["lat"]), crs=4326).to_crs(32613)
fixes = fixes.sort_values(["animal_id", "timestamp"]).reset_index(drop=True)
# %%
from shapely.geometry import LineString
lines = {a: LineString(list(zip(g.geometry.x, g.geometry.y))) for a, g in fixes.groupby("animal_id")}
tracks = gpd.GeoDataFrame({"animal_id": list(lines), "length_km": [l.length / 1000 for l in lines.values()]}, geometry=list(lines.values()), crs=fixes.crs)
# %%
max_speed = {}
for a, g in fixes.groupby("animal_id"):
    d = np.hypot(np.diff(g.geometry.x), np.diff(g.geometry.y)) / 1000
    h = np.diff(g["timestamp"]).astype("timedelta64[s]").astype(float) / 3600
    max_speed[a] = round(float((d / h).max()), 3)
# %%
hulls = {a: g.union_all().convex_hull for a, g in fixes.groupby("animal_id")}
home_range_km2 = {a: round(h.area / 1e6, 4) for a, h in hulls.items()}
# %%
overlap_km2 = hulls["D1"].intersection(hulls["D2"]).area / 1e6
# %%
fixes_per_day = {str(k): int(v) for k, v in fixes.groupby(fixes["timestamp"].dt.strftime("%Y-%m-%d")).size().items()}
# %%
hours = fixes["timestamp"].dt.hour
night_share = round(float(((hours >= 20) | (hours < 6)).mean() * 100), 2)
# %%
first_last_km = {a: round(float(g.geometry.iloc[0].distance(g.geometry.iloc[-1]) / 1000), 3) for a, g in fixes.groupby("animal_id")}
