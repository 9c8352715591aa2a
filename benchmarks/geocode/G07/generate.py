# Daily precipitation for 2023 on a 20 x 30 lat/lon grid (NetCDF, CF), wetter
# in the west and in winter.
import xarray as xr
r = rng()
time = pd.date_range("2023-01-01", "2023-12-31", freq="D")
lat = np.round(np.arange(45.0, 40.0, -0.25), 2)
lon = np.round(np.arange(-124.0, -116.5, 0.25), 2)
season = 1 + 0.8 * np.cos(2 * np.pi * (time.dayofyear.to_numpy() - 15) / 365)
west = 1 + 1.5 * (lon - lon.max()) / (lon.min() - lon.max())
wet = r.random((len(time), len(lat), len(lon))) < 0.35
pr = wet * r.gamma(1.2, 4.0, (len(time), len(lat), len(lon))) * season[:, None, None] * west[None, None, :]
ds = xr.Dataset({"pr": (("time", "lat", "lon"), pr.astype("float32"), {"units": "mm/day", "long_name": "precipitation"})}, coords={"time": time, "lat": lat, "lon": lon})
ds.to_netcdf("data/precip_2023.nc", encoding={"pr": {"zlib": True}})
