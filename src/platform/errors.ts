export interface FieldError {
  field: string;
  message: string;
}

/** The one error type. Thrown anywhere; the error handler turns it into an RFC 9457 problem response. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldError[],
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  static badRequest(message: string, errors?: FieldError[], code = 'VALIDATION_FAILED') {
    return new AppError(400, code, message, errors);
  }
  static unauthorized(message = 'Authentication required', code = 'UNAUTHORIZED') {
    return new AppError(401, code, message);
  }
  static forbidden(message = 'You are not allowed to do this', code = 'FORBIDDEN') {
    return new AppError(403, code, message);
  }
  static notFound(what = 'Resource') {
    return new AppError(404, 'NOT_FOUND', `${what} not found`);
  }
  static conflict(message: string, code = 'CONFLICT', extra?: Record<string, unknown>) {
    return new AppError(409, code, message, undefined, extra);
  }
  static invalidTransition(entity: string, from: string, to: string) {
    return new AppError(409, 'INVALID_TRANSITION', `${entity} cannot go from '${from}' to '${to}'`, undefined, {
      current_status: from,
    });
  }
  static unprocessable(message: string, code = 'UNPROCESSABLE', errors?: FieldError[]) {
    return new AppError(422, code, message, errors);
  }
}

export const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Content',
  423: 'Locked',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};
