# The production image: gunicorn for the site, the same image runs the Celery worker and beat.
# Configured only by environment variables; see README.md ("Production") and docker-compose.yml.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# WeasyPrint renders bills and notices with Pango and HarfBuzz; DejaVu is the fallback font.
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, so a code change does not reinstall them.
COPY pyproject.toml README.md ./
RUN pip install .

COPY . .

# Static files are collected at build time and served by WhiteNoise. The key is a throwaway for this
# one command; the real SECRET_KEY comes from the environment at run time.
RUN DJANGO_DEBUG=0 SECRET_KEY=collectstatic-at-build-time-only-not-a-real-secret-key-0123456789 \
    python manage.py collectstatic --noinput

RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin waterbilling \
    && mkdir -p /app/media \
    && chown waterbilling:waterbilling /app/media
USER waterbilling

ENV DJANGO_DEBUG=0 \
    MEDIA_ROOT=/app/media
VOLUME ["/app/media"]
EXPOSE 8000

# WEB_CONCURRENCY (read by gunicorn) sets the number of worker processes.
CMD ["gunicorn", "waterbilling.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-", "--timeout", "120"]
