# Atlantic-like bathymetry (WGS 84 model, warped to a custom Atlantic Albers
# projection at 10 km): America in the west, Europe/Africa in the east, shelves,
# abyssal plains and a mid-ocean ridge; tsunami paths from an origin off Portugal.
import pyproj
from rasterio.warp import reproject, Resampling
r = rng()
ALBERS = "+proj=aea +lat_0=30 +lon_0=-47.49013888888889 +lat_1=20 +lat_2=45 +x_0=0 +y_0=0 +datum=WGS84 +units=m +no_defs"
west = lambda lat: np.interp(lat, [5, 10, 18, 25, 32, 36, 41, 45, 52, 58], [-55, -62, -67, -80, -80, -75.5, -72, -64, -56, -60])
east = lambda lat: np.interp(lat, [5, 15, 22, 30, 36, 44, 52, 58], [-8, -17.5, -17, -10, -7, -9, -10, -6])
lon = np.arange(-85.0, 5.0, 0.1) + 0.05; lat = np.arange(58.0, 2.0, -0.1) - 0.05
LON, LAT = np.meshgrid(lon, lat)
d_coast = np.minimum(LON - west(LAT), east(LAT) - LON)          # degrees of ocean to the nearest coast
mid = (west(LAT) + east(LAT)) / 2
rough = smooth_field(LON.shape, r, 6)
depth = 5200 - 2600 * np.exp(-((LON - mid) / 3.0) ** 2) + 400 * (rough - 0.5)
depth = np.where(d_coast < 2.0, 150 + (depth - 150) * np.clip(d_coast / 2.0, 0, 1) ** 2, depth)
elev = np.where(d_coast > 0, -depth, 30 + 800 * np.clip(-d_coast / 8.0, 0, 1) * rough).astype("float32")
src_t = from_origin(-85.0, 58.0, 0.1, 0.1)
dst_t = from_origin(-4_500_000, 3_600_000, 10_000, 10_000)
dem = np.full((700, 850), -32768.0, dtype="float32")
reproject(elev, dem, src_transform=src_t, src_crs="EPSG:4326", dst_transform=dst_t, dst_crs=ALBERS,
          resampling=Resampling.nearest, dst_nodata=-32768.0)
write_raster("data/AtlanticDEM.tif", dem, dst_t, ALBERS, nodata=-32768.0)
origin = (-11.5, 36.5)
targets = {"Lisbon": 38.7, "Casablanca": 33.6, "Cork": 51.9, "Madeira": None, "Halifax": 44.6,
           "New York": 40.7, "Bermuda": None, "Puerto Rico": 18.4, "Cape Hatteras": 35.2, "Barbados": 13.1}
geod = pyproj.Geod(ellps="WGS84")
rows_ = []
for name, la in targets.items():
    if la is None:
        end = {"Bermuda": (-64.8, 32.3), "Madeira": (-16.9, 32.6)}[name]
    elif name in ("Lisbon", "Casablanca", "Cork"):
        end = (float(east(la)) - 0.3, la)
    else:
        end = (float(west(la)) + 0.3, la)
    line = LineString([origin, end])
    rows_.append({"Route": f"Origin to {name}", "lengthkm": round(geod.line_length(*line.xy) / 1000.0, 1), "geometry": line})
paths = gpd.GeoDataFrame(rows_, crs=4326)
paths.insert(0, "OBJECTID", np.arange(1, len(paths) + 1))
paths["Shape_Length"] = paths.geometry.length
paths.to_file("data/tsunami_paths.geojson", driver="GeoJSON")
