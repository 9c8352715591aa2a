# Delivers T19's samples and bay outline the way a field team's export
# might: sample x/y on a local grid (UTM 18N metres shifted to an arbitrary
# origin) in a CSV without latitude/longitude, and the bay as a shapefile
# without a .prj. Deterministic.
import os
import warnings
warnings.filterwarnings("ignore", message="'crs' was not provided")
ORIGIN = (330_000.0, 4_060_000.0)
s = gpd.read_file("data/DissolvedO2.geojson").to_crs(26918)
pd.DataFrame({"OBJECTID": s["OBJECTID"], "Station": s["Station"],
              "SampleDate": pd.to_datetime(s["SampleDate"]).dt.strftime("%Y-%m-%d"),
              "Depth": s["Depth"], "Parameter": s["Parameter"], "MeasureValue": s["MeasureValue"], "Unit": s["Unit"],
              "x": (s.geometry.x - ORIGIN[0]).round(1), "y": (s.geometry.y - ORIGIN[1]).round(1)}).to_csv("data/DissolvedO2.csv", index=False)
b = gpd.read_file("data/Bay.geojson").to_crs(26918)
gpd.GeoDataFrame({"OBJECTID": b["OBJECTID"]}, geometry=list(b.geometry.translate(-ORIGIN[0], -ORIGIN[1])), crs=None).to_file("data/Bay.shp")
os.remove("data/DissolvedO2.geojson"); os.remove("data/Bay.geojson")
