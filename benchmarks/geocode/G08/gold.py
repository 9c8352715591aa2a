import pyproj
airports = pd.read_csv("data/airports.csv")
legs = pd.read_csv("data/legs.csv")
geod = pyproj.Geod(ellps="WGS84")
# %%
pos = airports.set_index("iata")
def leg_km(o, d):
    return geod.inv(pos.at[o, "lon"], pos.at[o, "lat"], pos.at[d, "lon"], pos.at[d, "lat"])[2] / 1000
legs["km"] = [round(leg_km(o, d), 1) for o, d in zip(legs["origin"], legs["dest"])]
# %%
i = legs["km"].idxmax()
longest = f"{legs.at[i, 'origin']}-{legs.at[i, 'dest']}"
total_km = legs["km"].sum()
# %%
from shapely.geometry import LineString
a, b = pos.loc["LHR"], pos.loc["JFK"]
mid = geod.npts(a["lon"], a["lat"], b["lon"], b["lat"], 9)
route = LineString([(a["lon"], a["lat"])] + list(mid) + [(b["lon"], b["lat"])])
max_lat = max(y for _, y in route.coords)
# %%
t = pyproj.Transformer.from_crs(4326, 3857, always_xy=True)
ax, ay = t.transform(a["lon"], a["lat"])
bx, by = t.transform(b["lon"], b["lat"])
mercator_km = np.hypot(bx - ax, by - ay) / 1000
distortion = mercator_km / leg_km("LHR", "JFK")
# %%
import itertools
best = None
for p, q in itertools.combinations(pos.index, 2):
    d = leg_km(p, q)
    if best is None or d < best[0]:
        best = (d, sorted([p, q]))
nearest_pair = best[1]
# %%
back_azimuth = round(float(geod.inv(b["lon"], b["lat"], a["lon"], a["lat"])[0]), 3)
# %%
legs_gdf = gpd.GeoDataFrame(legs.copy(), geometry=[LineString([(pos.at[o, "lon"], pos.at[o, "lat"])] + list(geod.npts(pos.at[o, "lon"], pos.at[o, "lat"], pos.at[d, "lon"], pos.at[d, "lat"], 20)) + [(pos.at[d, "lon"], pos.at[d, "lat"])]) for o, d in zip(legs["origin"], legs["dest"])], crs=4326)
n_vertices = int(sum(len(g.coords) for g in legs_gdf.geometry))
# %%
j = legs["km"].idxmin()
shortest_leg = f"{legs.at[j, 'origin']}-{legs.at[j, 'dest']}"
# %%
mean_leg_km = round(float(legs["km"].mean()), 1)
